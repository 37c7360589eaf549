"""Storing one delivery of inbound events (a webhook's body, a batch of polled updates): each
event on its own, repaired when that is safe, quarantined when the database refuses it for what
it holds, and a database outage raised for the caller to answer "try again".

Used by the webhooks (``bot.web.webhooks``) and Telegram long polling
(``bot.channels.telegram_polling``), so both store the same way. A vote (kind ``vote``) is
stored as an event and recorded as feedback in the same transaction
(``bot.conversations.feedback``); the caller gets the outcomes, to acknowledge them where the
platform wants it (Telegram's callback queries).
"""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from bot.conversations.feedback import VoteOutcome, record_vote
from bot.conversations.inbound_batch import InboundBatcher
from bot.conversations.quarantine import (
    STORE_ERRORS,
    quarantine_event,
    repair_inbound,
    unstorable,
)
from bot.conversations.store import Recorded, pause_conversation, record_inbound
from bot.core.messages import InboundBatch, InboundMessage
from bot.core.metrics import METRICS

log = logging.getLogger(__name__)


async def store_events(
    sessionmaker: async_sessionmaker[AsyncSession],
    batch: InboundBatch,
    body: bytes,
    *,
    channel: str,
    staff_pause_minutes: int = 0,
    max_pending: int = 0,
    batcher: InboundBatcher | None = None,
    flood: int = 0,
) -> list[tuple[InboundMessage, VoteOutcome]]:
    """Store one delivery's events in one transaction; pause for ``staff_pause_minutes`` the
    threads where a person replied from the platform's inbox. A question arriving while its
    conversation has ``max_pending`` waiting is stored but held (0: no cap), or, with ``flood``,
    answered in its turn after a notice, and held only past ``flood`` waiting
    (``bot.conversations.inbound``). With ``batcher``, a
    delivery of one event is stored with the other webhooks' of the moment, in one transaction
    (``bot.conversations.inbound_batch``).

    Each event is stored on its own (a savepoint each), so that one the database refuses for
    what it holds, or one the adapter skipped, is quarantined with ``body`` and the others are
    stored. A database outage is raised, and nothing of the body is kept: the platform retries.
    Returns the votes of the delivery stored for the first time, each with its outcome.
    """
    messages = [_repaired(m) for m in batch.messages]
    votes: list[tuple[InboundMessage, VoteOutcome]] = []
    single = len(messages) == 1 and not batch.skipped and messages[0].kind not in ("staff", "vote")
    if batcher is not None and single:
        # The common case, one event: one statement, in the batch of the moment.
        try:
            recorded = await batcher.record(messages[0], max_pending=max_pending, flood=flood)
        except STORE_ERRORS as exc:
            if not unstorable(exc):
                raise
            async with batcher.engine.connect() as conn:
                auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
                await _refused(auto, channel, body, messages[0], exc)
            return votes
        _count(messages[0], recorded)
        return votes
    async with sessionmaker.begin() as session:
        for skipped in batch.skipped:
            METRICS.inc("tuvan_inbound_skipped_total", channel=channel)
            log.warning(
                "%s: %s skipped (kept in quarantine): %s",
                channel,
                skipped.where,
                skipped.reason,
            )
            await _quarantine(session, channel, body, skipped.where, skipped.reason)
        for message in messages:
            try:
                async with session.begin_nested():
                    recorded = await record_inbound(
                        session, message, max_pending=max_pending, flood=flood
                    )
                    if recorded.message_id is not None and message.kind == "staff":
                        await pause_conversation(
                            session, recorded.conversation_id, staff_pause_minutes
                        )
                    if recorded.message_id is not None and message.vote is not None:
                        outcome = await record_vote(
                            session,
                            channel=message.channel,
                            voter=message.external_user_id,
                            answer_id=message.vote.answer_id,
                            value=message.vote.value,
                            # No acknowledgement the platform shows itself: a message thanks.
                            thank=message.vote.ack_id is None,
                            language=message.vote.language,
                        )
                        votes.append((message, outcome))
            except STORE_ERRORS as exc:
                if not unstorable(exc):
                    raise
                await _refused(session, channel, body, message, exc)
                continue
            _count(message, recorded)
    return votes


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
    log.warning("%s: %s quarantined (acknowledged): %s", channel, where[:80], reason)
    await _quarantine(session, channel, body, where, reason)


def _count(message: InboundMessage, recorded: Recorded) -> None:
    if recorded.message_id is None:
        METRICS.inc("tuvan_inbound_duplicates_total", channel=message.channel)
        return
    METRICS.inc("tuvan_inbound_stored_total", channel=message.channel, kind=message.kind)
    if recorded.held:
        METRICS.inc("tuvan_inbound_held_total", channel=message.channel)
    if recorded.noticed:
        METRICS.inc("tuvan_inbound_waiting_notices_total", channel=message.channel)
