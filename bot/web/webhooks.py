"""Platform webhooks: verify → parse → store → 200, in one short transaction.

A webhook never waits for an answer (the worker answers). Errors map to HTTP here, at the edge
only: forged → 403, malformed → 400, too large → 413, a channel that is not set up → 404, the
database unreachable → 503 (the platform retries; nothing is lost). Never a 500. The signature
is checked before the body is parsed. An authentic event that cannot be read (no sender) or
that the database refuses for what it holds (a value too long, NaN) is quarantined and
acknowledged with 200: a retry would fail the same way forever. What the 200 says, and the
answer to a subscription check (GET), are the adapter's (``Adapter.webhook_ack``,
``Adapter.handshake``): a Telegram tap on 👍/👎 is acknowledged with its ``answerCallbackQuery``
in the body, Meta's check with its challenge; the route names no platform.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError

from bot.conversations.inbound_batch import InboundBatcher
from bot.conversations.intake import store_events
from bot.conversations.quarantine import STORE_ERRORS
from bot.core.errors import WebhookAuthError, WebhookPayloadError
from bot.core.messages import RawRequest
from bot.core.metrics import METRICS
from bot.keys import ADAPTERS, RUNTIME

log = logging.getLogger(__name__)


# The process's one batcher of webhooks' events (bot.conversations.inbound_batch).
INBOUND_BATCHER = web.AppKey("inbound_batcher", InboundBatcher)


def setup_webhooks(app: web.Application) -> None:
    """The platforms' webhook routes; each answers 404 until its channel is set up."""
    app[INBOUND_BATCHER] = InboundBatcher(app[RUNTIME].engine)
    app.on_cleanup.append(_close_batcher)
    app.router.add_post("/webhooks/telegram", webhook("telegram"))
    app.router.add_get("/webhooks/messenger", handshake("messenger"))
    app.router.add_post("/webhooks/messenger", webhook("messenger"))
    app.router.add_post("/webhooks/zalo", webhook("zalo"))


def webhook(channel: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler of ``channel``'s webhook, counted and timed."""

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
    declared = request.content_length
    if declared is not None and declared > request.app[RUNTIME].settings.max_body_bytes:
        # Refused on the header: waiting for a body that size would hold the connection.
        return _text(413, "body too large")
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
        batch = adapter.parse(raw)
    except WebhookPayloadError as exc:
        log.info("%s webhook with a malformed body: %s", channel, exc)
        return _text(400, f"malformed: {exc}")
    try:
        runtime = request.app[RUNTIME]
        votes = await store_events(
            runtime.sessionmaker,
            batch,
            raw.body,
            channel=channel,
            staff_pause_minutes=adapter.capabilities.staff_pause_minutes,
            max_pending=runtime.settings.limits.pending_per_conversation,
            flood=runtime.settings.limits.flood_per_conversation,
            batcher=request.app[INBOUND_BATCHER],
        )
    except (*STORE_ERRORS, SQLAlchemyError, OSError) as exc:
        # What ``store_events`` lets through is the database being out of reach: the
        # platform retries, and the event stores then. (An event that can never be stored is
        # quarantined there and acknowledged.)
        log.error("could not store a %s webhook (the platform will retry): %s", channel, exc)
        return _text(503, "try again later")
    ack = adapter.webhook_ack([(vote, outcome.recorded) for vote, outcome in votes])
    return web.Response(status=ack.status, text=ack.body, content_type=ack.content_type)


async def _close_batcher(app: web.Application) -> None:
    await app[INBOUND_BATCHER].close()


def handshake(channel: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    """The handler of ``channel``'s subscription check (GET): Meta's, for Messenger, answered
    with its challenge if the verify token matches."""

    async def handler(request: web.Request) -> web.Response:
        adapter = request.app[ADAPTERS].get(channel)
        if adapter is None:
            return _text(404, f"the {channel} channel is not set up")
        try:
            challenge = adapter.handshake(await _raw(request))
        except WebhookAuthError:
            return _text(403, "forbidden")
        if challenge is None:
            return _text(404, f"the {channel} channel has no subscription check")
        return _text(200, challenge)

    return handler


def _text(status: int, body: str) -> web.Response:
    return web.Response(status=status, text=body, content_type="text/plain")
