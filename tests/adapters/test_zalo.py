"""The Zalo OA adapter: signature, events, sends against a fake OA API, the token refresh."""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict
from pydantic import SecretStr

from adapters.zalo import (
    MAX_TEXT,
    UNDELIVERABLE_CODES,
    ZaloAdapter,
    refresh_tokens,
    zalo_signature,
)
from bot.core.errors import SendError, WebhookAuthError, WebhookPayloadError
from bot.core.messages import OutboundReply, RawRequest
from bot.core.settings import ZaloSettings
from tests.fakes.zalo_api import ZaloApiFake, start_zalo_api

APP_ID = "3482178216594085616"
OA_KEY = "oa-secret-key"
APP_SECRET = "app-secret"
USER = "2512523625412515"

# The documented shape of user_send_text (docs/platforms.md).
TEXT_EVENT: dict[str, Any] = {
    "event_name": "user_send_text",
    "app_id": APP_ID,
    "sender": {"id": USER},
    "recipient": {"id": "579745863508352884"},
    "message": {"text": "Học phí ngành CNTT bao nhiêu?", "msg_id": "a1b2c3d4e5f6"},
    "timestamp": "1699003881354",
    "user_id_by_app": "552177279717587730",
}


def settings_for(base_url: str = "http://127.0.0.1:9", **overrides: Any) -> ZaloSettings:
    values: dict[str, Any] = {
        "app_id": APP_ID,
        "app_secret": SecretStr(APP_SECRET),
        "oa_secret_key": SecretStr(OA_KEY),
        "api_base": base_url,
        "oauth_base": base_url,
        **overrides,
    }
    return ZaloSettings(**values)


def request(body: bytes | dict[str, Any], signature: str | None = None) -> RawRequest:
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    headers: CIMultiDict[str] = CIMultiDict()
    if signature is not None:
        headers["X-ZEvent-Signature"] = signature
    return RawRequest(method="POST", headers=headers, query={}, body=data)


def signed(body: dict[str, Any], key: str = OA_KEY, app_id: str = APP_ID) -> RawRequest:
    data = json.dumps(body, ensure_ascii=False).encode()
    mac = zalo_signature(app_id, data, str(body["timestamp"]), key)
    return request(data, f"mac={mac}")


class MemoryTokens:
    """A TokenProvider without a database: refreshes against the fake OAuth endpoint."""

    def __init__(self, http: aiohttp.ClientSession, settings: ZaloSettings) -> None:
        self.http = http
        self.settings = settings
        self.access = "at-0"
        self.refresh_token = "rt-0"
        self.refresh_calls: list[str] = []

    async def access_token(self) -> str:
        return self.access

    async def refresh(self, stale: str) -> str:
        self.refresh_calls.append(stale)
        if stale == self.access:
            self.access, self.refresh_token, _ = await refresh_tokens(
                self.http, self.settings, self.refresh_token
            )
        return self.access


def offline_adapter() -> ZaloAdapter:
    return ZaloAdapter(settings_for(), tokens=None)  # type: ignore[arg-type]


@pytest.fixture
async def fake() -> AsyncIterator[ZaloApiFake]:
    server = await start_zalo_api()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture
def zalo_settings(fake: ZaloApiFake) -> ZaloSettings:
    return settings_for(fake.base_url)


@pytest.fixture
def tokens(http: aiohttp.ClientSession, zalo_settings: ZaloSettings) -> MemoryTokens:
    return MemoryTokens(http, zalo_settings)


@pytest.fixture
def adapter(zalo_settings: ZaloSettings, tokens: MemoryTokens) -> ZaloAdapter:
    return ZaloAdapter(zalo_settings, tokens)


# -- signature -----------------------------------------------------------------------------


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


# -- verify --------------------------------------------------------------------------------


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


def test_zalo_body_that_is_not_json_is_a_payload_error() -> None:
    with pytest.raises(WebhookPayloadError):
        offline_adapter().verify(request(b"not json", "mac=" + "0" * 64))


def test_zalo_body_without_timestamp_is_a_payload_error() -> None:
    body = {k: v for k, v in TEXT_EVENT.items() if k != "timestamp"}
    with pytest.raises(WebhookPayloadError):
        offline_adapter().verify(request(body, "mac=" + "0" * 64))


# -- parse ---------------------------------------------------------------------------------


def test_user_send_text_becomes_a_text_message() -> None:
    [message] = offline_adapter().parse(signed(TEXT_EVENT))
    assert message.channel == "zalo"
    assert message.kind == "text"
    assert message.event_id == "a1b2c3d4e5f6"
    assert message.external_user_id == USER
    assert message.text == "Học phí ngành CNTT bao nhiêu?"
    assert message.sent_at == datetime(2023, 11, 3, 9, 31, 21, 354000, tzinfo=UTC)
    assert message.raw == TEXT_EVENT


def test_numeric_zalo_ids_are_kept_as_strings() -> None:
    body = {
        **TEXT_EVENT,
        "sender": {"id": 2512523625412515},
        "message": {"text": "hi", "msg_id": 77},
        "timestamp": 1699003881354,
    }
    [message] = offline_adapter().parse(request(body))
    assert message.external_user_id == "2512523625412515"
    assert message.event_id == "77"


def test_follow_becomes_a_follow_with_a_stable_id() -> None:
    body = {
        "oa_id": "579745863508352884",
        "follower": {"id": USER},
        "user_id_by_app": "552177279717587730",
        "event_name": "follow",
        "source": "oa_profile",
        "app_id": APP_ID,
        "timestamp": "1699003881354",
    }
    [first] = offline_adapter().parse(request(body))
    [again] = offline_adapter().parse(request(body))
    assert first.kind == "follow"
    assert first.external_user_id == USER
    assert first.event_id == again.event_id == f"follow:{USER}:1699003881354"


@pytest.mark.parametrize("event", ["user_send_sticker", "user_send_image", "user_send_location"])
def test_media_from_a_user_is_unsupported(event: str) -> None:
    body = {
        **TEXT_EVENT,
        "event_name": event,
        "message": {"msg_id": "m-9", "attachments": [{"type": "sticker", "payload": {}}]},
    }
    [message] = offline_adapter().parse(request(body))
    assert message.kind == "unsupported"
    assert message.event_id == "m-9"
    assert message.external_user_id == USER


def test_unfollow_is_stored_as_an_event() -> None:
    body = {
        "oa_id": "579745863508352884",
        "follower": {"id": USER},
        "event_name": "unfollow",
        "app_id": APP_ID,
        "timestamp": "1699003999000",
    }
    [message] = offline_adapter().parse(request(body))
    assert message.kind == "event"
    assert message.external_user_id == USER
    assert message.event_id == f"unfollow:{USER}:1699003999000"


def test_user_seen_message_is_an_event_of_the_recipient_user() -> None:
    body = {
        "event_name": "user_seen_message",
        "app_id": APP_ID,
        "sender": {"id": "579745863508352884"},  # the OA
        "recipient": {"id": USER},
        "message": {"msg_ids": ["x1", "x2"]},
        "timestamp": "1699003999000",
    }
    [message] = offline_adapter().parse(request(body))
    assert message.kind == "event"
    assert message.external_user_id == USER
    assert message.event_id == f"user_seen_message:{USER}:1699003999000"


def test_events_about_one_oa_message_get_distinct_ids() -> None:
    base = {"app_id": APP_ID, "sender": {"id": "oa"}, "recipient": {"id": USER}}
    sent = {**base, "event_name": "oa_send_text", "message": {"msg_id": "k"}, "timestamp": "1"}
    got = {**base, "event_name": "user_received_message", "message": {"msg_id": "k"}}
    [a] = offline_adapter().parse(request(sent))
    [b] = offline_adapter().parse(request({**got, "timestamp": "2"}))
    assert (a.kind, b.kind) == ("event", "event")
    assert a.event_id != b.event_id
    assert a.external_user_id == b.external_user_id == USER


def test_event_naming_no_user_yields_nothing() -> None:
    body = {"event_name": "change_oa_daily_quota", "app_id": APP_ID, "timestamp": "1"}
    assert offline_adapter().parse(request(body)) == []


@pytest.mark.parametrize(
    "body",
    [
        b"[1, 2]",
        b"nope",
        json.dumps({**TEXT_EVENT, "event_name": None}).encode(),
        json.dumps({k: v for k, v in TEXT_EVENT.items() if k != "event_name"}).encode(),
        json.dumps({k: v for k, v in TEXT_EVENT.items() if k != "sender"}).encode(),
        json.dumps({**TEXT_EVENT, "message": {"text": "hi"}}).encode(),
        json.dumps({**TEXT_EVENT, "message": "hi"}).encode(),
        json.dumps({**TEXT_EVENT, "sender": {"id": True}}).encode(),
        json.dumps({"event_name": "follow", "timestamp": "1"}).encode(),
    ],
)
def test_malformed_zalo_event_is_a_payload_error(body: bytes) -> None:
    with pytest.raises(WebhookPayloadError):
        offline_adapter().parse(request(body))


# -- send ----------------------------------------------------------------------------------


async def test_send_posts_a_cs_message_with_the_access_token_header(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    result = await adapter.send(http, OutboundReply(external_user_id=USER, text="Xin chào"))
    [sent] = fake.sends
    assert sent.headers["access_token"] == "at-0"
    assert sent.body == {"recipient": {"user_id": USER}, "message": {"text": "Xin chào"}}
    assert result.external_ids == ("zmsg1",)
    assert result.parts == 1


async def test_long_reply_is_split_under_2000_chars_on_paragraph_borders(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    paragraphs = [f"Đoạn {n} " + "chữ " * 300 for n in range(4)]  # ~1206 chars each
    text = "\n\n".join(p.strip() for p in paragraphs)
    result = await adapter.send(http, OutboundReply(external_user_id=USER, text=text))
    texts = [r.body["message"]["text"] for r in fake.sends]
    assert len(texts) == result.parts == 4
    assert all(len(t) <= MAX_TEXT for t in texts)
    assert texts == [p.strip() for p in paragraphs]  # two never fit together: one each
    assert result.external_ids == ("zmsg1", "zmsg2", "zmsg3", "zmsg4")


async def test_empty_reply_sends_nothing(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    result = await adapter.send(http, OutboundReply(external_user_id=USER, text="  "))
    assert result.parts == 0
    assert fake.sends == []


@pytest.mark.parametrize("code", [-213, -230])
async def test_outside_the_window_is_a_permanent_send_error(
    code: int, adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_send(code, "User has not interacted with the OA in the past 7 days")
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert caught.value.retryable is False
    assert caught.value.code == "outside_window"  # the worker stores it as undeliverable
    assert str(code) in UNDELIVERABLE_CODES
    assert f"error {code}" in str(caught.value)
    assert len(fake.sends) == 1


async def test_unknown_zalo_error_is_not_retried(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_send(-999, "something new")
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert caught.value.retryable is False
    assert caught.value.code == "-999"
    assert caught.value.code not in UNDELIVERABLE_CODES


async def test_zalo_rate_limit_is_retryable_after_a_wait(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_send(-32, "Exceeds request limit per minute")
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert caught.value.retryable is True
    assert caught.value.retry_after == 60.0


@pytest.mark.parametrize(("status", "retryable"), [(503, True), (429, True), (400, False)])
async def test_http_errors_map_to_retryable_or_not(
    status: int,
    retryable: bool,
    adapter: ZaloAdapter,
    fake: ZaloApiFake,
    http: aiohttp.ClientSession,
) -> None:
    fake.fail_send(status)
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert caught.value.retryable is retryable
    assert caught.value.status == status


async def test_unreachable_zalo_is_retryable(
    tokens: MemoryTokens, http: aiohttp.ClientSession
) -> None:
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    adapter = ZaloAdapter(settings_for(f"http://127.0.0.1:{port}"), tokens)
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert caught.value.retryable is True
    assert "at-0" not in str(caught.value)


async def test_rejected_token_is_refreshed_and_the_part_resent_once(
    adapter: ZaloAdapter, tokens: MemoryTokens, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.access_token = "at-elsewhere"  # the stored token expired
    result = await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert [s.headers["access_token"] for s in fake.sends] == ["at-0", "at-1"]
    assert fake.oauth_calls == 1
    assert tokens.refresh_calls == ["at-0"]
    assert result.external_ids == ("zmsg2",)


async def test_later_parts_use_the_refreshed_token(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_send(-216, "Access token is invalid")
    text = "a" * MAX_TEXT + " " + "b" * 10
    result = await adapter.send(http, OutboundReply(external_user_id=USER, text=text))
    assert [s.headers["access_token"] for s in fake.sends] == ["at-0", "at-1", "at-1"]
    assert result.parts == 2
    assert fake.oauth_calls == 1


async def test_token_rejected_again_after_refresh_is_a_send_error(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_send(-216, "Access token is invalid", times=2)
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert caught.value.code == "-216"
    assert len(fake.sends) == 2
    assert fake.oauth_calls == 1
    assert "at-0" not in str(caught.value)
    assert "at-1" not in str(caught.value)


async def test_access_token_never_appears_in_send_errors(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_send(-201, "Invalid parameter: access_token=at-0")
    with pytest.raises(SendError) as caught:
        await adapter.send(http, OutboundReply(external_user_id=USER, text="hi"))
    assert "at-0" not in str(caught.value)


async def test_typing_does_nothing_on_zalo(
    adapter: ZaloAdapter, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    await adapter.typing(http, USER)
    assert fake.requests == []


# -- refresh_tokens ------------------------------------------------------------------------


async def test_refresh_posts_the_form_with_the_app_secret_header(
    zalo_settings: ZaloSettings, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    access, refresh, expires_in = await refresh_tokens(http, zalo_settings, "rt-0")
    assert (access, refresh, expires_in) == ("at-1", "rt-1", 90000)
    [call] = fake.refreshes
    assert call.form == {"refresh_token": "rt-0", "app_id": APP_ID, "grant_type": "refresh_token"}
    assert call.headers["secret_key"] == APP_SECRET
    assert call.headers["Content-Type"].startswith("application/x-www-form-urlencoded")


async def test_spent_refresh_token_needs_a_human(
    zalo_settings: ZaloSettings, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, zalo_settings, "rt-spent")
    assert caught.value.retryable is False
    assert caught.value.code == "-14014"
    assert "authorise the OA again" in str(caught.value)
    assert "rt-spent" not in str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [
        {"error_name": "Invalid app", "error_description": "app_id is invalid"},
        {"refresh_token": "rt-x", "expires_in": "90000"},
        {"access_token": "at-x", "expires_in": "90000"},
    ],
)
async def test_refresh_answer_without_a_token_pair_is_permanent(
    answer: dict[str, Any],
    zalo_settings: ZaloSettings,
    fake: ZaloApiFake,
    http: aiohttp.ClientSession,
) -> None:
    fake.script_oauth(answer)
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, zalo_settings, "rt-0")
    assert caught.value.retryable is False


async def test_refresh_server_error_is_retryable(
    zalo_settings: ZaloSettings, fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    fake.script_oauth({"error": -1}, status=502)
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, zalo_settings, "rt-0")
    assert caught.value.retryable is True
    assert caught.value.status == 502


async def test_refresh_without_app_secret_is_a_configuration_error(
    fake: ZaloApiFake, http: aiohttp.ClientSession
) -> None:
    with pytest.raises(SendError) as caught:
        await refresh_tokens(http, settings_for(fake.base_url, app_secret=None), "rt-0")
    assert caught.value.retryable is False
    assert fake.oauth_calls == 0
