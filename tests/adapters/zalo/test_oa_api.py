"""Sending customer-service messages against a fake OA API: parts, error codes, token refresh."""

from __future__ import annotations

import socket

import aiohttp
import pytest

from adapters.zalo import ZaloAdapter
from adapters.zalo.oa_api import MAX_TEXT, UNDELIVERABLE_CODES
from bot.core.errors import SendError
from bot.core.messages import OutboundReply
from tests.adapters.zalo._support import (
    USER,
    MemoryTokens,
    settings_for,
)
from tests.fakes.zalo_api import ZaloApiFake


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
