"""The constant-time secret comparison every webhook check ends in."""

from __future__ import annotations

from adapters.webhook_auth import secrets_equal


def test_secrets_compare_in_constant_time_and_never_match_empty() -> None:
    assert secrets_equal("abc", "abc")
    assert not secrets_equal("abd", "abc")
    assert not secrets_equal(None, "abc")
    assert not secrets_equal("", "")
