"""Which platforms a process runs, read from the settings: their adapters, what each channel
allows, the client session they share, and the upkeep some of them need (Zalo's tokens).

The web chat has no adapter: the browser reads its replies from the conversation store. Its
entry in ``STORE_READ`` tells the worker so, and the worker names no platform.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import aiohttp
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.interface import Adapter
from adapters.messenger import MessengerAdapter
from adapters.telegram import TelegramAdapter
from adapters.zalo import ZaloAdapter
from bot.channels.zalo_tokens import DbTokenProvider
from bot.core.messages import Capabilities
from bot.core.settings import Settings

log = logging.getLogger(__name__)

# Channels whose clients read replies from the store themselves: nothing to send, no window.
STORE_READ: Mapping[str, Capabilities] = {"web": Capabilities(typing=False, delivers=False)}

TOKEN_CHECK_S = 300.0  # how often the Zalo access token's expiry is looked at


def capabilities_of(adapters: Mapping[str, Adapter], channel: str) -> Capabilities | None:
    """What ``channel`` allows: asked of its adapter, else a store-read channel's; None for a
    channel that is not set up."""
    adapter = adapters.get(channel)
    if adapter is not None:
        return adapter.capabilities
    return STORE_READ.get(channel)


def build_adapters(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    http: aiohttp.ClientSession,
) -> dict[str, Adapter]:
    """The adapters of the channels that are set up (a token or key is configured)."""
    adapters: dict[str, Adapter] = {}
    if settings.telegram.enabled:
        adapters["telegram"] = TelegramAdapter(settings.telegram)
    if settings.messenger.enabled:
        adapters["messenger"] = MessengerAdapter(settings.messenger)
    if settings.zalo.enabled:
        tokens = DbTokenProvider(sessionmaker, http, settings.zalo)
        adapters["zalo"] = ZaloAdapter(settings.zalo, tokens)
    return adapters


async def close_adapters(adapters: Mapping[str, Adapter]) -> None:
    """Let go of the clients some adapters own (python-telegram-bot's connection pool)."""
    for adapter in adapters.values():
        await adapter.aclose()


@asynccontextmanager
async def open_adapters(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    http: aiohttp.ClientSession,
) -> AsyncIterator[dict[str, Adapter]]:
    """``build_adapters``, closed again on the way out."""
    adapters = build_adapters(settings, sessionmaker, http)
    try:
        yield adapters
    finally:
        await close_adapters(adapters)


@asynccontextmanager
async def http_session() -> AsyncIterator[aiohttp.ClientSession]:
    """The process's client session for platform APIs: pooled, with timeouts."""
    timeout = aiohttp.ClientTimeout(total=30, connect=10)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        yield session


async def refresh_tokens(adapters: Mapping[str, Adapter], stop: asyncio.Event) -> None:
    """Until ``stop``: refresh the Zalo access token before it expires (a scheduled check)."""
    zalo = adapters.get("zalo")
    tokens = zalo.tokens if isinstance(zalo, ZaloAdapter) else None
    if not isinstance(tokens, DbTokenProvider):
        return
    while not stop.is_set():
        try:
            await tokens.refresh_if_due()
        except Exception:  # a task boundary: log, try again at the next check
            log.exception("scheduled Zalo token refresh failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), TOKEN_CHECK_S)
