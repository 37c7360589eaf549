"""Telegram long polling (``getUpdates``): for development, where no public URL can take the
webhook. The loop hands each batch to a ``deliver`` callback and confirms it only after: the
adapter stores nothing itself (``bot.channels.telegram_polling`` gives it the store)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, TypeVar

import aiohttp

from adapters.payloads import is_json_int
from adapters.telegram.client import BotApiClient, open_client
from adapters.telegram.updates import parse_update
from bot.core.errors import SendError, WebhookPayloadError
from bot.core.messages import InboundMessage
from bot.core.settings import TelegramSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

Deliver = Callable[[list[InboundMessage]], Awaitable[None]]


async def get_updates(
    http: aiohttp.ClientSession | None,
    settings: TelegramSettings,
    offset: int | None,
    timeout: int,  # noqa: ASYNC109 (getUpdates' own parameter: how long Telegram holds the call)
    *,
    client: BotApiClient | None = None,
) -> list[dict[str, Any]]:
    """Updates from ``offset`` on (which confirms those before it), waiting up to ``timeout`` s,
    as the JSON Telegram sent. ``client`` (``poll``'s) is used if given, else one for this call;
    ``http`` is not used."""
    if client is None:
        async with open_client(settings) as own:
            return await get_updates(http, settings, offset, timeout, client=own)
    result = await client.call(
        "getUpdates",
        client.bot.get_update_dicts(offset, timeout, read_timeout=timeout + 15.0),
    )
    if not isinstance(result, list):
        raise SendError("telegram getUpdates: the result is not a list", retryable=True)
    return [u for u in result if isinstance(u, dict)]


async def poll(
    settings: TelegramSettings,
    http: aiohttp.ClientSession,
    deliver: Deliver,
    *,
    stop: asyncio.Event,
    timeout: int = 30,  # noqa: ASYNC109 (getUpdates' long-poll time, see get_updates)
    backoff_max_s: float = 30.0,
) -> None:
    """Fetch updates until ``stop`` is set, hand each batch to ``deliver`` and only then move
    the offset past it: updates whose delivery failed are fetched again. ``deliver`` must be
    idempotent (Telegram may repeat updates that were not yet confirmed)."""
    async with open_client(settings) as client:
        await _poll(settings, client, deliver, stop, timeout, backoff_max_s)


async def _poll(
    settings: TelegramSettings,
    client: BotApiClient,
    deliver: Deliver,
    stop: asyncio.Event,
    timeout: int,  # noqa: ASYNC109 (see poll)
    backoff_max_s: float,
) -> None:
    offset: int | None = None
    delay = 1.0
    while not stop.is_set():
        wait = delay
        try:
            fetch = get_updates(None, settings, offset, timeout, client=client)
            updates = await _unless_stopped(fetch, stop)
        except SendError as exc:
            if exc.status == 409:
                raise SendError(
                    f"{exc} (a webhook is set: run `tuvan telegram delete-webhook` first)",
                    retryable=False,
                    status=409,
                ) from exc
            if not exc.retryable:
                raise
            wait = exc.retry_after or delay
            log.warning("telegram getUpdates failed, again in %.0f s: %s", wait, exc)
        else:
            if updates is None:  # stopped while waiting
                return
            try:
                await _deliver(updates, deliver)
            except Exception:  # a task boundary: keep polling, the offset stays put
                log.exception("storing Telegram updates failed; again in %.0f s", wait)
            else:
                ids = [u["update_id"] for u in updates if is_json_int(u.get("update_id"))]
                if ids:
                    offset = max(ids) + 1
                delay = 1.0
                continue
        delay = min(delay * 2, backoff_max_s)
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait)


async def _deliver(updates: list[dict[str, Any]], deliver: Deliver) -> None:
    messages: list[InboundMessage] = []
    for update in updates:
        try:
            messages.extend(parse_update(update))
        except WebhookPayloadError as exc:
            log.warning("skipping Telegram update %s: %s", update.get("update_id"), exc)
    if messages:
        await deliver(messages)


async def _unless_stopped(work: Awaitable[T], stop: asyncio.Event) -> T | None:
    """The result of ``work``, or None if ``stop`` is set first (``work`` is then cancelled)."""
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        task.cancel()
        stopper.cancel()
        await asyncio.gather(task, stopper, return_exceptions=True)
    return None if task.cancelled() else task.result()
