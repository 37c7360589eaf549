"""Processes: ``tuvan serve`` (web), ``tuvan worker`` (answers and sends), ``tuvan demo`` (both).

Each is stateless: PostgreSQL holds the conversations and both queues, so any number of serve and
worker processes may run against one database. On the embedded default the first process starts
the server and later ones attach (bot.db.engine).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import socket
from collections.abc import AsyncIterator, Mapping

import aiohttp
from aiohttp import web

from adapters.interface import Adapter
from bot.answer.readiness import keep_tier_one_ready
from bot.channels.wiring import http_session, open_adapters, refresh_tokens
from bot.core.errors import ConfigError
from bot.keys import ADAPTERS, HTTP
from bot.runtime import Runtime
from bot.web.app import CleanupContext, create_app
from bot.worker.loop import Worker
from bot.worker.prune_schedule import run_prune_schedule


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


def pruning(runtime: Runtime, stop: asyncio.Event) -> asyncio.Task[int]:
    """The retention schedule beside a worker (bot.worker.prune_schedule), until ``stop``."""
    return asyncio.create_task(
        run_prune_schedule(runtime.settings.retention, runtime.sessionmaker, runtime.engine, stop)
    )


def tier_one_ready(runtime: Runtime) -> CleanupContext:
    """Tier 1's calibration kept ready beside the web app (bot.answer.readiness)."""

    async def ready(app: web.Application) -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.create_task(keep_tier_one_ready(runtime.answerer, stop))
        try:
            yield
        finally:
            stop.set()
            await task

    return ready


def working(runtime: Runtime) -> CleanupContext:
    """A worker beside the web app, on its adapters and client session: started with the app,
    and stopped (its answers in hand finished) when the app stops."""

    async def worker(app: web.Application) -> AsyncIterator[None]:
        stop = asyncio.Event()
        adapters: dict[str, Adapter] = app[ADAPTERS]
        task = asyncio.create_task(make_worker(runtime, adapters, app[HTTP]).run(stop))
        pruner = pruning(runtime, stop)
        try:
            yield
        finally:
            stop.set()
            await task
            await pruner

    return worker


async def serve(runtime: Runtime, host: str, port: int, *, with_worker: bool = False) -> None:
    """Serve HTTP until SIGINT/SIGTERM; with ``with_worker``, answer in this process too."""
    app = create_app(runtime)
    app.cleanup_ctx.append(tier_one_ready(runtime))
    if with_worker:
        app.cleanup_ctx.append(working(runtime))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:  # taken since the command's check, or an address not ours
            raise ConfigError(listen_problem(host, port, exc)) from exc
        running: dict[str, Adapter] = app[ADAPTERS]
        adapters = list(running)
        channels = ", ".join(["web", *adapters] if runtime.settings.web.enabled else adapters)
        print(
            f"tuvan is ready: http://{host}:{port}  (channels: {channels or 'none'}; Ctrl-C stops)",
            flush=True,
        )
        await until_stopped()
    finally:
        await runner.cleanup()


async def work(runtime: Runtime) -> None:
    """Answer and send until SIGINT/SIGTERM; the answers in hand are finished first."""
    async with (
        http_session() as http,
        open_adapters(runtime.settings, runtime.sessionmaker, http) as adapters,
    ):
        stop = asyncio.Event()
        refresher = asyncio.create_task(refresh_tokens(adapters, stop))
        task = asyncio.create_task(make_worker(runtime, adapters, http).run(stop))
        pruner = pruning(runtime, stop)
        ready = asyncio.create_task(keep_tier_one_ready(runtime.answerer, stop))
        print(
            f"tuvan worker is running (channels: {', '.join(adapters) or 'web only'})", flush=True
        )
        try:
            await until_stopped(stop)
        finally:
            stop.set()
            await task
            await pruner
            await ready
            refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await refresher


async def until_stopped(stop: asyncio.Event | None = None) -> None:
    """Wait for SIGINT or SIGTERM (a service manager stops with SIGTERM): returning lets the
    caller release the embedded PostgreSQL, which a default SIGTERM death would leave running."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def listen_problem(host: str, port: int, exc: OSError) -> str:
    """One line for an address tuvan cannot listen on (instead of a traceback)."""
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} is in use on {host}: stop what holds it, or choose another with --port"
    return f"cannot listen on {host}:{port}: {exc.strerror or exc} (check --host / TUVAN_HOST)"


def check_listen(host: str, port: int) -> None:
    """Raise ConfigError now if ``host:port`` can't be listened on, before the models load."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds
        try:
            probe.bind(address)
        except OSError as exc:
            raise ConfigError(listen_problem(host, port, exc)) from exc
