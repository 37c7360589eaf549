"""The two queues in the ``messages`` table: claim, finish and retry, with one lease rule.

No broker: inbound rows wait in ``received`` and outbound rows in ``queued``. Claiming a row
moves it to ``answering`` / ``sending``, counts an attempt and gives the claimer a lease
(``lease_until``). The lease rule, the same for the worker and the web chat: a row in flight
is free again once its lease has run out (its claimer died), and a result is kept only from the
claim that still holds the row (same attempt number), so a late claimer's result is dropped.
Delivery is at least once: a crash after a platform accepted a reply can send it twice, never
lose it.

The worker takes the next free row with ``FOR UPDATE SKIP LOCKED``, so workers in several
processes share the queues without taking the same row, and in arrival order within a
conversation: a row waits while an earlier one of its conversation is still to do. The web chat
claims the one message its request posted (the browser orders its own messages), also one whose
earlier answering failed, since the visitor asking again is the retry.

Functions take the session first and never commit: the caller owns the transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncSession

INBOX_CHANNEL = "tuvan_inbox"  # NOTIFY channel: an inbound message to answer
OUTBOX_CHANNEL = "tuvan_outbox"  # NOTIFY channel: an outbound message to send


def _free(row: str, waiting: str, working: str) -> str:
    """The lease rule, as SQL on the ``messages`` row ``row``: free when it waits, or when it
    is in flight and the lease of the claim that took it has run out (the claimer died).
    The arguments are this module's constants, never input."""
    return (
        f"({row}.status IN ({waiting}) OR ({row}.status = '{working}' "
        f"AND ({row}.lease_until IS NULL OR {row}.lease_until < now())))"
    )


def _take(working: str) -> str:
    """A claim: in flight for ``:lease`` seconds more, one attempt more."""
    take = f"UPDATE messages m SET status = '{working}', attempts = m.attempts + 1, "  # noqa: S608
    return take + "lease_until = now() + make_interval(secs => :lease)"


_INBOUND_COLUMNS = "m.id, m.conversation_id, m.channel, m.kind, m.text, m.attempts"
_OUTBOUND_COLUMNS = (
    "m.id, m.conversation_id, m.channel, m.author, m.text, m.citations, m.details, m.attempts"
)


def _claim_next(direction: str, waiting: str, working: str, only: str, columns: str) -> TextClause:
    """The next free row of a queue, oldest first, none while an earlier row of the same
    conversation is still to do; SKIP LOCKED passes over a row another worker is claiming."""
    return text(
        f"""
        {_take(working)}
        WHERE m.id = (
            SELECT n.id FROM messages n
            WHERE n.direction = '{direction}' {only}
              AND {_free("n", waiting, working)}
              AND (n.next_attempt_at IS NULL OR n.next_attempt_at <= now())
              AND NOT EXISTS (
                  SELECT 1 FROM messages p
                  WHERE p.conversation_id = n.conversation_id AND p.direction = '{direction}'
                    AND p.id < n.id AND p.status IN ({waiting}, '{working}'))
            ORDER BY n.id
            LIMIT 1
            FOR UPDATE SKIP LOCKED)
        RETURNING {columns}
        """  # noqa: S608 - constants of this module
    )


_CLAIM_NEXT_INBOUND = _claim_next("in", "'received'", "answering", "", _INBOUND_COLUMNS)
_CLAIM_NEXT_OUTBOUND = _claim_next(
    "out", "'queued'", "sending", "AND n.author IN ('bot', 'staff')", _OUTBOUND_COLUMNS
)
_CLAIM_INBOUND = text(
    f"""
    {_take("answering")}, error = NULL
    WHERE m.id = :id AND {_free("m", "'received', 'failed'", "answering")}
    RETURNING {_INBOUND_COLUMNS}
    """
)


@dataclass(frozen=True)
class ClaimedInbound:
    """A question taken to answer; ``attempts`` identifies this claim."""

    id: int
    conversation_id: int
    channel: str
    kind: str
    text: str
    attempts: int


@dataclass(frozen=True)
class ClaimedOutbound:
    """A reply taken to send; ``details`` may hold ``parts_sent`` of an earlier attempt."""

    id: int
    conversation_id: int
    channel: str
    author: str
    text: str
    citations: list[dict[str, Any]]
    details: dict[str, Any]
    attempts: int


@dataclass(frozen=True)
class QueueDepths:
    inbox: int  # questions received or being answered
    outbox: int  # replies queued or being sent


def _inbound(row: Any) -> ClaimedInbound:
    return ClaimedInbound(
        id=int(row.id),
        conversation_id=int(row.conversation_id),
        channel=str(row.channel),
        kind=str(row.kind),
        text=str(row.text),
        attempts=int(row.attempts),
    )


async def claim_next_inbound(session: AsyncSession, lease_s: float) -> ClaimedInbound | None:
    """The next question to answer, in arrival order within its conversation; None: none."""
    row = (await session.execute(_CLAIM_NEXT_INBOUND, {"lease": lease_s})).first()
    return None if row is None else _inbound(row)


async def claim_next_outbound(session: AsyncSession, lease_s: float) -> ClaimedOutbound | None:
    """The next bot or staff reply to send, in order within its conversation; None: none."""
    row = (await session.execute(_CLAIM_NEXT_OUTBOUND, {"lease": lease_s})).first()
    if row is None:
        return None
    return ClaimedOutbound(
        id=int(row.id),
        conversation_id=int(row.conversation_id),
        channel=str(row.channel),
        author=str(row.author),
        text=str(row.text),
        citations=list(row.citations or []),
        details=dict(row.details or {}),
        attempts=int(row.attempts),
    )


async def claim_inbound(
    session: AsyncSession, message_id: int, lease_s: float
) -> ClaimedInbound | None:
    """Take this question to answer (new, failed before, or left by a claimer whose lease ran
    out); None while another claim holds it or once it is answered."""
    row = (await session.execute(_CLAIM_INBOUND, {"id": message_id, "lease": lease_s})).first()
    return None if row is None else _inbound(row)


async def finish_inbound(
    session: AsyncSession, claim: ClaimedInbound, status: str, error: str | None
) -> None:
    """Close a question without a reply (``skipped``, ``failed``), if the claim still holds."""
    await session.execute(
        text(
            "UPDATE messages SET status = CAST(:status AS message_status), "
            "done_at = now(), error = :error, lease_until = NULL "
            "WHERE id = :id AND status = 'answering' AND attempts = :attempts"
        ),
        {"id": claim.id, "status": status, "error": error, "attempts": claim.attempts},
    )


async def retry_inbound(
    session: AsyncSession, claim: ClaimedInbound, error: str, at: datetime
) -> None:
    """Put a question back in the queue, to be claimed again from ``at``."""
    await session.execute(
        text(
            "UPDATE messages SET status = 'received', error = :error, lease_until = NULL, "
            "next_attempt_at = :at WHERE id = :id AND attempts = :attempts"
        ),
        {"id": claim.id, "error": error[:1000], "at": at, "attempts": claim.attempts},
    )


async def skip_inbound(session: AsyncSession, message_id: int) -> None:
    """Close a question nobody will answer by bot (a person has the conversation)."""
    await session.execute(
        text("UPDATE messages SET status = 'skipped', done_at = clock_timestamp() WHERE id = :id"),
        {"id": message_id},
    )


async def finish_outbound(
    session: AsyncSession,
    message_id: int,
    status: str,
    error: str | None,
    external_ids: Sequence[str] = (),
) -> None:
    """Close a reply: ``sent`` (with the platform's message ids), ``undeliverable``, ``failed``."""
    await session.execute(
        text(
            "UPDATE messages SET status = CAST(:status AS message_status), error = :error, "
            "done_at = now(), lease_until = NULL, "
            "details = details || jsonb_build_object('external_ids', CAST(:ids AS jsonb)) "
            "WHERE id = :id"
        ),
        {
            "id": message_id,
            "status": status,
            "error": error[:1000] if error else None,
            "ids": json.dumps(list(external_ids), ensure_ascii=False),
        },
    )


async def retry_outbound(
    session: AsyncSession, message_id: int, error: str, parts_sent: int, at: datetime
) -> None:
    """Queue a reply again from ``at``; the parts already delivered are not sent again."""
    await session.execute(
        text(
            "UPDATE messages SET status = 'queued', error = :error, "
            "lease_until = NULL, next_attempt_at = :at, "
            "details = details || jsonb_build_object('parts_sent', :parts) "
            "WHERE id = :id"
        ),
        {"id": message_id, "parts": parts_sent, "error": error[:1000], "at": at},
    )


_DEPTHS = text(
    """
    SELECT
      count(*) FILTER (WHERE status IN ('received', 'answering')) AS inbox,
      count(*) FILTER (WHERE status IN ('queued', 'sending')) AS outbox
    FROM messages WHERE status IN ('received', 'answering', 'queued', 'sending')
    """
)


async def queue_depths(session: AsyncSession) -> QueueDepths:
    row = (await session.execute(_DEPTHS)).one()
    return QueueDepths(int(row.inbox), int(row.outbox))
