"""The payload of a 👍/👎 button (bot.core.votes): read back exactly, within Telegram's 64
bytes, and nothing else taken for a vote."""

from __future__ import annotations

import pytest

from bot.core.votes import DOWN, UP, read_vote_payload, vote_payload


def test_a_payload_names_the_answer_and_the_vote_and_reads_back() -> None:
    assert vote_payload(1234, UP) == "tuvan-vote:1234:up"
    assert read_vote_payload(vote_payload(1234, DOWN)) == (1234, DOWN)
    assert read_vote_payload(f"  {vote_payload(7, UP)}\n") == (7, UP)


def test_the_largest_answer_id_fits_telegrams_callback_data() -> None:
    payload = vote_payload(2**63 - 1, DOWN)
    assert len(payload.encode()) <= 64
    assert read_vote_payload(payload) == (2**63 - 1, DOWN)


@pytest.mark.parametrize(
    "text",
    [
        "👍",
        "tuvan-vote:12:maybe",
        "tuvan-vote:0:up",
        "tuvan-vote:012:up",
        "tuvan-vote:-3:down",
        "tuvan-vote:9223372036854775808:up",  # past PostgreSQL's bigint
        "tuvan-vote:12:up please",
        "Học phí tuvan-vote:12:up",
        "TUVAN-VOTE:12:UP",
    ],
)
def test_anything_else_is_not_a_vote(text: str) -> None:
    assert read_vote_payload(text) is None


def test_a_vote_is_up_or_down() -> None:
    with pytest.raises(ValueError, match="1"):
        vote_payload(5, 0)
