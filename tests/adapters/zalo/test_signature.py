"""The Zalo webhook's signature, and what verify accepts and rejects."""

from __future__ import annotations

import hashlib
import json

import pytest

from adapters.zalo import ZaloAdapter
from adapters.zalo.signature import zalo_signature
from bot.core.errors import WebhookAuthError, WebhookPayloadError
from bot.core.messages import RawRequest
from tests.adapters.zalo._support import (
    APP_ID,
    APP_SECRET,
    OA_KEY,
    TEXT_EVENT,
    offline_adapter,
    request,
    settings_for,
    signed,
)


def test_signature_is_plain_sha256_of_app_id_body_timestamp_and_oa_key() -> None:
    body = json.dumps(TEXT_EVENT, ensure_ascii=False).encode()
    expected = hashlib.sha256(
        APP_ID.encode() + body + TEXT_EVENT["timestamp"].encode() + OA_KEY.encode()
    ).hexdigest()
    assert zalo_signature(APP_ID, body, TEXT_EVENT["timestamp"], OA_KEY) == expected


def test_signature_matches_the_fixed_regression_vector() -> None:
    # Computed once (and checked with `printf ... | sha256sum`); a change of formula breaks it.
    body = b'{"event_name":"user_send_text","timestamp":"1699003881354"}'
    assert (
        zalo_signature(APP_ID, body, "1699003881354", OA_KEY)
        == "1ca7531a998c1bdcc87d927a48086cdc154511dd5bfdb9b04a79ae92ed8a79ad"
    )


def test_signed_zalo_event_is_accepted() -> None:
    offline_adapter().verify(signed(TEXT_EVENT))


def test_signature_over_the_exact_bytes_is_accepted_with_escaped_unicode() -> None:
    data = json.dumps(TEXT_EVENT).encode()  # \u escapes, as some senders serialise
    mac = zalo_signature(APP_ID, data, TEXT_EVENT["timestamp"], OA_KEY)
    offline_adapter().verify(request(data, f"mac={mac}"))


def test_forged_zalo_signature_is_rejected() -> None:
    with pytest.raises(WebhookAuthError):
        offline_adapter().verify(request(TEXT_EVENT, "mac=" + "0" * 64))


def test_zalo_event_signed_with_another_key_is_rejected() -> None:
    with pytest.raises(WebhookAuthError):
        offline_adapter().verify(signed(TEXT_EVENT, key=APP_SECRET))


def test_tampered_zalo_body_is_rejected() -> None:
    good = signed(TEXT_EVENT)
    tampered = good.body.replace(b"CNTT", b"Y khoa")
    with pytest.raises(WebhookAuthError):
        offline_adapter().verify(RawRequest("POST", good.headers, {}, tampered))


@pytest.mark.parametrize("header", [None, "", "0" * 64, "sha256=abc"])
def test_missing_or_malformed_zalo_signature_is_rejected(header: str | None) -> None:
    with pytest.raises(WebhookAuthError):
        offline_adapter().verify(request(TEXT_EVENT, header))


def test_event_for_another_app_is_rejected_even_when_signed() -> None:
    other = {**TEXT_EVENT, "app_id": "999"}
    with pytest.raises(WebhookAuthError):
        offline_adapter().verify(signed(other, app_id="999"))
    with pytest.raises(WebhookAuthError):
        offline_adapter().verify(signed(other))


@pytest.mark.parametrize("missing", ["app_id", "oa_secret_key"])
def test_unconfigured_zalo_webhook_rejects_everything(missing: str) -> None:
    adapter = ZaloAdapter(settings_for(**{missing: None}), tokens=None)  # type: ignore[arg-type]
    with pytest.raises(WebhookAuthError):
        adapter.verify(signed(TEXT_EVENT))


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[" * 2000, json.dumps({**TEXT_EVENT, "timestamp": None}).encode()],
)
def test_the_signature_is_checked_before_the_body_is_parsed(body: bytes) -> None:
    with pytest.raises(WebhookAuthError):
        offline_adapter().verify(request(body, "mac=" + "0" * 64))


def test_a_signed_body_that_is_not_json_is_a_payload_error() -> None:
    body = b'{"timestamp": "1699003881354", "app_id": '
    mac = zalo_signature(APP_ID, body, "1699003881354", OA_KEY)
    with pytest.raises(WebhookPayloadError):
        offline_adapter().verify(request(body, f"mac={mac}"))


def test_a_nested_timestamp_signs_nothing_but_the_events_own() -> None:
    event = {**TEXT_EVENT, "message": {**TEXT_EVENT["message"], "timestamp": "42"}}
    body = json.dumps(event).encode()
    offline_adapter().verify(
        request(body, f"mac={zalo_signature(APP_ID, body, event['timestamp'], OA_KEY)}")
    )
    with pytest.raises(WebhookAuthError):  # signed with the nested one: not the event's
        offline_adapter().verify(request(body, f"mac={zalo_signature(APP_ID, body, '42', OA_KEY)}"))
