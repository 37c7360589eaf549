"""Processes: ``tuvan serve`` (web), ``tuvan worker`` (answers and sends), ``tuvan demo`` (both).

Each is stateless: PostgreSQL holds the conversations and both queues, so any number of serve and
worker processes may run against one database. On the embedded default the first process starts
the server and later ones attach (bot.db.engine).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

import aiohttp

from adapters.interface import Adapter
from bot.core.settings import Settings
from bot.runtime import Runtime
from bot.web.app import create_app, http_session, start_site, until_stopped
from bot.worker.loop import Worker

log = logging.getLogger(__name__)


def build_adapters(
    settings: Settings, runtime: Runtime, http: aiohttp.ClientSession
) -> dict[str, Adapter]:
    """The adapters of the channels that are set up (a token or key is configured)."""
    adapters: dict[str, Adapter] = {}
    if settings.telegram.enabled:
        from adapters.telegram import TelegramAdapter

        adapters["telegram"] = TelegramAdapter(settings.telegram)
    if settings.messenger.enabled:
        from adapters.messenger import MessengerAdapter

        adapters["messenger"] = MessengerAdapter(settings.messenger)
    if settings.zalo.enabled:
        from adapters.zalo import ZaloAdapter
        from bot.channels.zalo_tokens import DbTokenProvider

        tokens = DbTokenProvider(runtime.sessionmaker, http, settings.zalo)
        adapters["zalo"] = ZaloAdapter(settings.zalo, tokens)
    return adapters


async def close_adapters(adapters: Mapping[str, Adapter]) -> None:
    """Let go of the clients some adapters own (python-telegram-bot's connection pool)."""
    for adapter in adapters.values():
        close = getattr(adapter, "aclose", None)
        if close is not None:
            await close()


def make_worker(
    runtime: Runtime, adapters: Mapping[str, Adapter], http: aiohttp.ClientSession
) -> Worker:
    return Worker(
        runtime.settings,
        runtime.sessionmaker,
        runtime.answerer,
        adapters,
        http,
        database_url=runtime.engine.url.render_as_string(hide_password=False),
    )


async def serve(runtime: Runtime, host: str, port: int, *, with_worker: bool = False) -> None:
    """Serve HTTP until SIGINT/SIGTERM; with ``with_worker``, answer in this process too."""
    async with http_session() as http:
        adapters = build_adapters(runtime.settings, runtime, http)
        runner = await start_site(create_app(runtime, adapters, http), host, port)
        stop = asyncio.Event()
        worker_task = None
        if with_worker:
            worker_task = asyncio.create_task(make_worker(runtime, adapters, http).run(stop))
        channels = (
            ", ".join(["web", *adapters]) if runtime.settings.web.enabled else ", ".join(adapters)
        )
        print(
            f"tuvan is ready: http://{host}:{port}  (channels: {channels or 'none'}; Ctrl-C stops)",
            flush=True,
        )
        try:
            await until_stopped(stop)
        finally:
            stop.set()
            if worker_task is not None:
                await worker_task
            await runner.cleanup()
            await close_adapters(adapters)


async def work(runtime: Runtime) -> None:
    """Answer and send until SIGINT/SIGTERM; the answers in hand are finished first."""
    async with http_session() as http:
        adapters = build_adapters(runtime.settings, runtime, http)
        stop = asyncio.Event()
        worker = make_worker(runtime, adapters, http)
        refresher = None
        if "zalo" in adapters:
            refresher = asyncio.create_task(_refresh_zalo(adapters["zalo"], stop))
        task = asyncio.create_task(worker.run(stop))
        print(
            f"tuvan worker is running (channels: {', '.join(adapters) or 'web only'})", flush=True
        )
        try:
            await until_stopped(stop)
        finally:
            stop.set()
            await task
            await close_adapters(adapters)
            if refresher is not None:
                refresher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refresher


async def _refresh_zalo(adapter: Adapter, stop: asyncio.Event) -> None:
    """Refresh the Zalo access token before it expires (checked every few minutes)."""
    tokens = getattr(adapter, "tokens", None)
    while not stop.is_set() and tokens is not None:
        try:
            await tokens.refresh_if_due()
        except Exception:  # a task boundary: log, try again at the next check
            log.exception("scheduled Zalo token refresh failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 300)
