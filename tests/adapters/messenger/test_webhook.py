"""Messenger's Page webhook: the subscription handshake and the body's signature."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from multidict import CIMultiDict
from pydantic import SecretStr

from adapters.messenger import MessengerAdapter
from bot.core.errors import WebhookAuthError
from bot.core.messages import RawRequest
from tests.adapters.messenger._support import (
    APP_SECRET,
    PAGE_ID,
    VERIFY_TOKEN,
    from_user,
    make_settings,
    post,
    webhook,
)


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def handshake_request(**query: str) -> RawRequest:
    return RawRequest("GET", CIMultiDict(), query, b"")


def test_handshake_with_the_verify_token_returns_the_challenge(adapter: MessengerAdapter) -> None:
    raw = handshake_request(
        **{"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1158201444"}
    )
    assert adapter.handshake(raw) == "1158201444"


@pytest.mark.parametrize(
    "query",
    [
        {"hub.mode": "subscribe", "hub.verify_token": "wrong", "hub.challenge": "1"},
        {"hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"},
        {"hub.mode": "subscribe", "hub.challenge": "1"},
        {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN},
    ],
)
def test_handshake_without_the_right_token_is_rejected(
    adapter: MessengerAdapter, query: dict[str, str]
) -> None:
    with pytest.raises(WebhookAuthError):
        adapter.handshake(handshake_request(**query))


def test_handshake_without_a_configured_verify_token_is_rejected() -> None:
    adapter = MessengerAdapter(make_settings(verify_token=None))
    raw = handshake_request(
        **{"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"}
    )
    with pytest.raises(WebhookAuthError):
        adapter.handshake(raw)


def test_valid_messenger_signature_is_accepted(adapter: MessengerAdapter) -> None:
    body = webhook([from_user(message={"mid": "m_1", "text": "hi"})])
    adapter.verify(post(body, sign(body)))


def test_forged_messenger_signature_is_rejected(adapter: MessengerAdapter) -> None:
    body = webhook([from_user(message={"mid": "m_1", "text": "hi"})])
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sign(body, secret="another-secret")))
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body + b" ", sign(body)))


def test_missing_signature_header_is_rejected(adapter: MessengerAdapter) -> None:
    body = webhook([])
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body))


def test_signature_with_another_algorithm_prefix_is_rejected(adapter: MessengerAdapter) -> None:
    body = webhook([])
    sha1 = "sha1=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha1).hexdigest()
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sha1))
    # The hex of a correct sha256 under another name is still refused.
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sign(body).replace("sha256=", "sha512=")))


def test_signature_is_over_the_raw_escaped_bytes_not_a_reserialisation(
    adapter: MessengerAdapter,
) -> None:
    # Meta sends (and signs) JSON with escaped unicode: "H\u1ecdc ph\u00ed".
    event = from_user(message={"mid": "m_vi", "text": "Học phí ngành CNTT?"})
    body = json.dumps({"object": "page", "entry": [{"id": PAGE_ID, "messaging": [event]}]})
    raw_bytes = body.encode()
    assert b"\\u1ecd" in raw_bytes
    adapter.verify(post(raw_bytes, sign(raw_bytes)))
    reserialised = json.dumps(json.loads(raw_bytes), ensure_ascii=False).encode()
    assert reserialised != raw_bytes
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(raw_bytes, sign(reserialised)))
    # And what is parsed is the unescaped text.
    assert adapter.parse(post(raw_bytes)).messages[0].text == "Học phí ngành CNTT?"


def test_signature_is_rejected_when_no_app_secret_is_configured() -> None:
    adapter = MessengerAdapter(make_settings(app_secret=None))
    body = webhook([])
    with pytest.raises(WebhookAuthError):
        adapter.verify(post(body, sign(body)))
    empty = MessengerAdapter(make_settings(app_secret=SecretStr("")))
    with pytest.raises(WebhookAuthError):
        empty.verify(post(body, "sha256=" + hmac.new(b"", body, hashlib.sha256).hexdigest()))
