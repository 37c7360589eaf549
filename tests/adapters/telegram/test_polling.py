"""Telegram long polling (getUpdates): offsets, redelivery, a webhook in the way, stopping."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from adapters.telegram.polling import get_updates, poll
from bot.core.errors import SendError
from bot.core.messages import InboundMessage
from tests.adapters.telegram._support import (
    message_update,
    wait_for,
)
from tests.fakes.telegram_api import FakeTelegramApi


async def test_get_updates_passes_offset_and_timeout(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    api.push_update(message_update(1, text="a"))
    api.push_update(message_update(2, text="b"))
    updates = await get_updates(http, api.settings(), None, 0)
    assert [u["update_id"] for u in updates] == [1, 2]
    assert await get_updates(http, api.settings(), 3, 0) == []
    assert api.calls_to("getUpdates")[1].body == {"offset": 3, "timeout": 0}


async def test_poll_fetches_again_what_it_could_not_deliver(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    api.push_update(message_update(1, text="a"))
    api.push_update({"update_id": 2, "message": "not a message"})  # skipped, logged
    delivered: list[list[str]] = []
    stop = asyncio.Event()

    async def deliver(messages: list[InboundMessage]) -> None:
        delivered.append([m.event_id for m in messages])
        if len(delivered) == 1:
            raise RuntimeError("database down")
        stop.set()

    await asyncio.wait_for(poll(api.settings(), http, deliver, stop=stop, timeout=0), 10)
    assert delivered == [["1"], ["1"]]
    assert api.offsets[:2] == [None, None]  # not advanced past the failed batch


async def test_poll_stops_with_a_hint_while_a_webhook_is_set(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    api.webhook = {"url": "https://x.example/t"}

    async def deliver(messages: list[InboundMessage]) -> None:
        raise AssertionError("nothing to deliver")

    with pytest.raises(SendError, match="tuvan telegram delete-webhook"):
        await poll(api.settings(), http, deliver, stop=asyncio.Event(), timeout=0)


async def test_poll_returns_promptly_when_stopped_during_a_long_poll(
    api: FakeTelegramApi, http: aiohttp.ClientSession
) -> None:
    async def deliver(messages: list[InboundMessage]) -> None:
        raise AssertionError("nothing to deliver")

    stop = asyncio.Event()
    task = asyncio.create_task(poll(api.settings(), http, deliver, stop=stop, timeout=30))
    await wait_for(lambda: api.offsets)
    stop.set()
    await asyncio.wait_for(task, 2)
