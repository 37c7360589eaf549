"""The web process: webhooks, web chat, health, metrics (and, with the admin issue, /admin).

A webhook is verified, parsed and stored in one short transaction and acknowledged at once; it
never waits for an answer (the worker answers). Errors map to HTTP here, at the edge only:
forged → 403, malformed → 400, too large → 413, a channel that is not set up → 404, the
database unreachable → 503 (the platform retries; nothing is lost). Never a 500.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

import aiohttp
from aiohttp import web
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from adapters.interface import Adapter
from bot.conversations.store import pause_conversation, record_inbound
from bot.core.errors import WebhookAuthError, WebhookPayloadError
from bot.core.messages import InboundMessage, RawRequest
from bot.core.metrics import METRICS
from bot.keys import HTTP, RUNTIME
from bot.runtime import Runtime

log = logging.getLogger(__name__)

ADAPTERS = web.AppKey("adapters", dict[str, Adapter])
ASK_MAX_BODY = 64 * 1024


def create_app(
    runtime: Runtime, adapters: Mapping[str, Adapter], http: aiohttp.ClientSession
) -> web.Application:
    app = web.Application(client_max_size=runtime.settings.max_body_bytes)
    app[RUNTIME] = runtime
    app[HTTP] = http
    app[ADAPTERS] = dict(adapters)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    app.router.add_post("/api/ask", ask)
    app.router.add_post("/webhooks/telegram", _webhook("telegram"))
    app.router.add_get("/webhooks/messenger", messenger_handshake)
    app.router.add_post("/webhooks/messenger", _webhook("messenger"))
    app.router.add_post("/webhooks/zalo", _webhook("zalo"))
    if runtime.settings.web.enabled:
        from bot.web.webchat.handlers import setup_webchat

        setup_webchat(app)
    if runtime.settings.admin.enabled:
        from admin.app import create_admin_app

        app.add_subapp("/admin", create_admin_app())
    return app


# -- webhooks ---------------------------------------------------------------------------------


def _webhook(channel: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        started = time.perf_counter()
        response = await _receive(request, channel)
        METRICS.inc("tuvan_webhook_requests_total", channel=channel, status=str(response.status))
        METRICS.observe("tuvan_webhook_seconds", time.perf_counter() - started, channel=channel)
        return response

    return handler


async def _raw(request: web.Request) -> RawRequest:
    return RawRequest(
        method=request.method,
        headers=request.headers,
        query=request.query,
        body=await request.read(),  # 413 from aiohttp past client_max_size
    )


async def _receive(request: web.Request, channel: str) -> web.Response:
    adapter = request.app[ADAPTERS].get(channel)
    if adapter is None:
        return _text(404, f"the {channel} channel is not set up")
    try:
        raw = await _raw(request)
    except web.HTTPRequestEntityTooLarge:
        return _text(413, "body too large")
    try:
        adapter.verify(raw)
    except WebhookAuthError as exc:
        log.warning("%s webhook refused: %s", channel, exc)
        return _text(403, "forbidden")
    except WebhookPayloadError as exc:
        return _text(400, f"malformed: {exc}")
    try:
        messages = adapter.parse(raw)
    except WebhookPayloadError as exc:
        log.info("%s webhook with a malformed body: %s", channel, exc)
        return _text(400, f"malformed: {exc}")
    try:
        await store_inbound(request.app[RUNTIME], messages)
    except (SQLAlchemyError, OSError) as exc:
        log.error("could not store a %s webhook (the platform will retry): %s", channel, exc)
        return _text(503, "try again later")
    return _text(200, "ok")


async def store_inbound(runtime: Runtime, messages: list[InboundMessage]) -> None:
    """Store a webhook's events in one transaction; pause threads where staff replied."""
    if len(messages) == 1 and messages[0].kind != "staff":
        # The common case, one event: a single atomic statement, no BEGIN/COMMIT round trips.
        async with runtime.engine.connect() as conn:
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            recorded = await record_inbound(auto, messages[0])
        _count(messages[0], recorded.message_id)
        return
    async with runtime.sessionmaker.begin() as session:
        for message in messages:
            recorded = await record_inbound(session, message)
            _count(message, recorded.message_id)
            if recorded.message_id is not None and message.kind == "staff":
                minutes = runtime.settings.messenger.staff_pause_minutes
                await pause_conversation(session, recorded.conversation_id, minutes)


def _count(message: InboundMessage, message_id: int | None) -> None:
    if message_id is None:
        METRICS.inc("tuvan_inbound_duplicates_total", channel=message.channel)
    else:
        METRICS.inc("tuvan_inbound_stored_total", channel=message.channel, kind=message.kind)


async def messenger_handshake(request: web.Request) -> web.Response:
    adapter = request.app[ADAPTERS].get("messenger")
    if adapter is None:
        return _text(404, "the messenger channel is not set up")
    try:
        challenge = adapter.handshake(await _raw(request))  # type: ignore[attr-defined]
    except WebhookAuthError:
        return _text(403, "forbidden")
    return _text(200, str(challenge))


def _text(status: int, body: str) -> web.Response:
    return web.Response(status=status, text=body, content_type="text/plain")


# -- health, metrics, one-shot questions ------------------------------------------------------


async def healthz(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    try:
        async with runtime.sessionmaker() as session:
            await session.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError) as exc:
        return web.json_response({"status": "unavailable", "database": str(exc)[:200]}, status=503)
    return web.json_response({"status": "ok"})


_DEPTHS = text(
    """
    SELECT
      count(*) FILTER (WHERE status IN ('received', 'answering')) AS inbox,
      count(*) FILTER (WHERE status IN ('queued', 'sending')) AS outbox
    FROM messages WHERE status IN ('received', 'answering', 'queued', 'sending')
    """
)


async def metrics(request: web.Request) -> web.Response:
    gauges: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    try:
        async with request.app[RUNTIME].sessionmaker() as session:
            row = (await session.execute(_DEPTHS)).one()
        gauges["tuvan_queue_depth"] = {
            (("queue", "inbox"),): float(row.inbox),
            (("queue", "outbox"),): float(row.outbox),
        }
    except (SQLAlchemyError, OSError) as exc:
        log.warning("metrics: queue depths unavailable: %s", exc)
    return web.Response(
        text=METRICS.render(gauges),
        content_type="text/plain",
        charset="utf-8",
        headers={"X-Content-Type-Options": "nosniff"},
    )


async def ask(request: web.Request) -> web.Response:
    """``POST /api/ask {"question": ...}``: one answer as JSON, nothing stored (tools, tests)."""
    raw = await request.content.read(ASK_MAX_BODY + 1)
    if len(raw) > ASK_MAX_BODY:
        return _json_error(413, f"the request body is over {ASK_MAX_BODY} bytes")
    try:
        body = json.loads(raw)
        question = body["question"]
        if not isinstance(question, str):
            raise TypeError("question must be a string")
    except (ValueError, KeyError, TypeError) as exc:
        return _json_error(400, f'expected {{"question": "..."}}: {exc}')
    answer = await request.app[RUNTIME].answerer.answer(question)
    return web.json_response(answer.to_json(), dumps=lambda o: json.dumps(o, ensure_ascii=False))


def _json_error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


# -- running ----------------------------------------------------------------------------------


@asynccontextmanager
async def http_session() -> AsyncIterator[aiohttp.ClientSession]:
    """The process's client session for platform APIs: pooled, with timeouts."""
    timeout = aiohttp.ClientTimeout(total=30, connect=10)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        yield session


async def start_site(app: web.Application, host: str, port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner


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
