"""Platform webhooks: verify → parse → store → 200, in one short transaction.

A webhook never waits for an answer (the worker answers). Errors map to HTTP here, at the edge
only: forged → 403, malformed → 400, too large → 413, a channel that is not set up → 404, the
database unreachable → 503 (the platform retries; nothing is lost). Never a 500. The signature
is checked before the body is parsed. An authentic event that cannot be read (no sender) or
that the database refuses for what it holds (a value too long, NaN) is quarantined and
acknowledged with 200: a retry would fail the same way forever.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from adapters.messenger import MessengerAdapter
from bot.conversations.quarantine import STORE_ERRORS, quarantine_event, repair_inbound, unstorable
from bot.conversations.store import pause_conversation, record_inbound
from bot.core.errors import WebhookAuthError, WebhookPayloadError
from bot.core.messages import InboundBatch, InboundMessage, RawRequest
from bot.core.metrics import METRICS
from bot.keys import ADAPTERS, RUNTIME
from bot.runtime import Runtime

log = logging.getLogger(__name__)


def setup_webhooks(app: web.Application) -> None:
    """The platforms' webhook routes; each answers 404 until its channel is set up."""
    app.router.add_post("/webhooks/telegram", webhook("telegram"))
    app.router.add_get("/webhooks/messenger", messenger_handshake)
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
        await store_inbound(
            request.app[RUNTIME], channel, batch, raw.body, adapter.capabilities.staff_pause_minutes
        )
    except (*STORE_ERRORS, SQLAlchemyError, OSError) as exc:
        # What ``store_inbound`` lets through is the database being out of reach: the
        # platform retries, and the event stores then. (An event that can never be stored is
        # quarantined there and acknowledged.)
        log.error("could not store a %s webhook (the platform will retry): %s", channel, exc)
        return _text(503, "try again later")
    return _text(200, "ok")


async def store_inbound(
    runtime: Runtime,
    channel: str,
    batch: InboundBatch,
    body: bytes,
    staff_pause_minutes: int,
) -> None:
    """Store a webhook's events in one transaction; pause for ``staff_pause_minutes`` the threads
    where a person replied from the platform's inbox. A question arriving while its
    conversation has ``limits.pending_per_conversation`` waiting is stored but held.

    Each event is stored on its own (a savepoint each), so that one the database refuses for
    what it holds, or one the adapter skipped, is quarantined with ``body`` and the others are
    stored. A database outage is raised, and nothing of the body is kept: the platform retries.
    """
    messages = [_repaired(m) for m in batch.messages]
    max_pending = runtime.settings.limits.pending_per_conversation
    if len(messages) == 1 and not batch.skipped and messages[0].kind != "staff":
        # The common case, one event: a single atomic statement, no BEGIN/COMMIT round trips.
        try:
            async with runtime.engine.connect() as conn:
                auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
                recorded = await record_inbound(auto, messages[0], max_pending=max_pending)
        except STORE_ERRORS as exc:
            if not unstorable(exc):
                raise
            async with runtime.engine.connect() as conn:
                auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
                await _refused(auto, channel, body, messages[0], exc)
            return
        _count(messages[0], recorded.message_id)
        return
    async with runtime.sessionmaker.begin() as session:
        for skipped in batch.skipped:
            METRICS.inc("tuvan_inbound_skipped_total", channel=channel)
            log.warning(
                "%s webhook: %s skipped (kept in quarantine): %s",
                channel,
                skipped.where,
                skipped.reason,
            )
            await _quarantine(session, channel, body, skipped.where, skipped.reason)
        for message in messages:
            try:
                async with session.begin_nested():
                    recorded = await record_inbound(session, message, max_pending=max_pending)
                    if recorded.message_id is not None and message.kind == "staff":
                        await pause_conversation(
                            session, recorded.conversation_id, staff_pause_minutes
                        )
            except STORE_ERRORS as exc:
                if not unstorable(exc):
                    raise
                await _refused(session, channel, body, message, exc)
                continue
            _count(message, recorded.message_id)


def _repaired(message: InboundMessage) -> InboundMessage:
    repaired, repairs = repair_inbound(message)
    if repairs:
        METRICS.inc("tuvan_inbound_repaired_total", channel=message.channel)
        log.warning(
            "%s event %s stored repaired: %s",
            message.channel,
            repaired.event_id[:80],
            ", ".join(repairs),
        )
    return repaired


async def _quarantine(
    session: AsyncSession | AsyncConnection, channel: str, body: bytes, where: str, reason: str
) -> None:
    if await quarantine_event(session, channel, body, where, reason):
        METRICS.inc("tuvan_inbound_quarantined_total", channel=channel)


async def _refused(
    session: AsyncSession | AsyncConnection,
    channel: str,
    body: bytes,
    message: InboundMessage,
    exc: BaseException,
) -> None:
    """Quarantine an event the database refused for what it holds; the reason is the
    database's own words (their first line: no statement, no parameters)."""
    orig = getattr(exc, "orig", None) or exc
    lines = str(orig).strip().splitlines()
    reason = f"not stored ({type(orig).__name__}): {lines[0] if lines else ''}"
    where = f"event {message.event_id}"
    log.warning("%s webhook: %s quarantined (acknowledged): %s", channel, where[:80], reason)
    await _quarantine(session, channel, body, where, reason)


def _count(message: InboundMessage, message_id: int | None) -> None:
    if message_id is None:
        METRICS.inc("tuvan_inbound_duplicates_total", channel=message.channel)
    else:
        METRICS.inc("tuvan_inbound_stored_total", channel=message.channel, kind=message.kind)


async def messenger_handshake(request: web.Request) -> web.Response:
    """Meta's subscription check (GET): the challenge back, if the verify token matches."""
    adapter = request.app[ADAPTERS].get("messenger")
    if not isinstance(adapter, MessengerAdapter):
        return _text(404, "the messenger channel is not set up")
    try:
        challenge = adapter.handshake(await _raw(request))
    except WebhookAuthError:
        return _text(403, "forbidden")
    return _text(200, str(challenge))


def _text(status: int, body: str) -> web.Response:
    return web.Response(status=status, text=body, content_type="text/plain")
