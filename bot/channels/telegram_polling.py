"""Telegram long polling into the conversation store: the development stand-in for the webhook.

The polling loop lives in the adapter (``adapters.telegram.polling``), which must not touch the
database; this gives it the store. Updates are stored as the webhook stores them
(``bot.conversations.intake``: repaired, or quarantined when the database refuses one, so one bad
update never stalls the loop), and the worker answers them. A tap on an answer's 👍/👎 is stored
as a vote and acknowledged at once (``answerCallbackQuery``, the choice marked on the keyboard).
"""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.telegram import TelegramAdapter
from adapters.telegram.polling import poll
from bot.conversations.intake import store_events
from bot.core.messages import InboundBatch, InboundMessage
from bot.core.settings import TelegramSettings

log = logging.getLogger(__name__)


async def poll_into_store(
    settings: TelegramSettings,
    sessionmaker: async_sessionmaker[AsyncSession],
    http: aiohttp.ClientSession,
    *,
    stop: asyncio.Event,
    timeout: int = 30,  # noqa: ASYNC109 (getUpdates' long-poll time)
    max_pending: int = 0,
) -> None:
    """Long-poll Telegram until ``stop`` is set, storing each batch of updates in one
    transaction; the offset moves past a batch only once it is committed. ``max_pending``: the
    per-conversation cap on questions waiting (``bot.conversations.inbound``; 0: none)."""

    acknowledger = TelegramAdapter(settings)  # its Bot API client is made on the first vote

    async def store(messages: list[InboundMessage]) -> None:
        # The updates as Telegram sent them: what a quarantined one is kept as.
        body = json.dumps([m.raw for m in messages], ensure_ascii=False).encode()
        batch = InboundBatch(messages=messages)
        votes = await store_events(
            sessionmaker, batch, body, channel="telegram", max_pending=max_pending
        )
        log.info("telegram: %d update(s) received", len(messages))
        for vote, outcome in votes:  # after the commit: a failed call loses no vote
            await acknowledger.acknowledge_vote(vote, outcome.recorded)

    try:
        await poll(settings, http, store, stop=stop, timeout=timeout)
    finally:
        await acknowledger.aclose()
