"""Telegram long polling into the conversation store: the development stand-in for the webhook.

The polling loop lives in the adapter (``adapters.telegram.polling``), which must not touch the
database; this gives it the store. Updates are stored as the webhook stores them, and the worker
answers them.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.telegram.polling import poll
from bot.conversations.store import record_inbound_batch
from bot.core.messages import InboundMessage
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

    async def store(messages: list[InboundMessage]) -> None:
        async with sessionmaker.begin() as session:
            recorded = await record_inbound_batch(session, messages, max_pending=max_pending)
        new = sum(r.message_id is not None for r in recorded)
        log.info("telegram: %d update(s) received, %d new", len(messages), new)

    await poll(settings, http, store, stop=stop, timeout=timeout)
