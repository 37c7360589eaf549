"""The two queues in the ``messages`` table: claim, finish and retry, with one lease rule.

No broker: inbound rows wait in ``received`` and outbound rows in ``queued``. Claiming a row
moves it to ``answering`` / ``sending``, counts an attempt and gives the claimer a lease
(``lease_until``). The lease rule, the same for the worker and the web chat: a row in flight
is free again once its lease has run out (its claimer died), and a row is changed only by the
claim that still holds it (same status, same attempt number: the fence), so a late claimer's
update changes nothing. A claimer still working renews its lease (``renew_lease``).
Delivery is at least once: a crash after a platform accepted a reply can send it twice, never
lose it.

``attempts`` counts claims, so a claim whose claimer crashed counts too. The worker's claims
stop at ``max_attempts``; ``fail_exhausted`` (the worker's sweep) marks a row that reached it
``failed``, which frees its conversation. The web chat claims the one message its request
posted, also one whose earlier answering failed, since the visitor asking again is the retry.

The worker takes the next free row with ``FOR UPDATE SKIP LOCKED``, so workers in several
processes share the queues without taking the same row, and in arrival order within a
conversation: a row waits while an earlier one of its conversation is still to do. That check
reads ``ix_messages_pending_conversation`` (only rows still to do), never the history.

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
# NOTIFY channel: a staff reply in a conversation (payload: its id), for the open web chats
CONVERSATION_CHANNEL = "tuvan_conversation"


def _free(row: str, waiting: str, working: str, *, capped: bool) -> str:
    """The lease rule, as SQL on the ``messages`` row ``row``: free when it waits, or when it
    is in flight and the lease of the claim that took it has run out (the claimer died);
    ``capped``: and only while it has had fewer than ``:max_attempts`` claims.
    The arguments are this module's constants, never input."""
    free = (
        f"({row}.status IN ({waiting}) OR ({row}.status = '{working}' "
        f"AND ({row}.lease_until IS NULL OR {row}.lease_until < now())))"
    )
    return f"({free} AND {row}.attempts < :max_attempts)" if capped else free


def _take(working: str) -> str:
    """A claim: in flight for ``:lease`` seconds more, one attempt more."""
    take = f"UPDATE messages m SET status = '{working}', attempts = m.attempts + 1, "  # noqa: S608
    return take + "lease_until = now() + make_interval(secs => :lease)"


_INBOUND_COLUMNS = "m.id, m.conversation_id, m.channel, m.kind, m.text, m.attempts"
_OUTBOUND_COLUMNS = (
    "m.id, m.conversation_id, m.channel, m.author, m.text, m.citations, m.details, m.attempts, "
    "m.tier"
)
_PENDING = "'received', 'answering', 'queued', 'sending'"  # ix_messages_pending_conversation


def _claim_next(direction: str, waiting: str, working: str, only: str, columns: str) -> TextClause:
    """The next free row of a queue, oldest first, none while an earlier row of the same
    conversation is still to do; SKIP LOCKED passes over a row another worker is claiming.
    A candidate must be its conversation's oldest row still to do: ``min(id)`` answered by
    one probe of the partial index of those rows (``_PENDING`` repeated in the query so
    that the planner may use it), whatever the conversation's history or the queue's size."""
    return text(
        f"""
        {_take(working)}
        WHERE m.id = (
            SELECT n.id FROM messages n
            WHERE n.direction = '{direction}' {only}
              AND {_free("n", waiting, working, capped=True)}
              AND (n.next_attempt_at IS NULL OR n.next_attempt_at <= now())
              AND n.id = (
                  SELECT min(p.id) FROM messages p
                  WHERE p.conversation_id = n.conversation_id
                    AND p.status IN ({_PENDING})
                    AND p.status IN ({waiting}, '{working}'))
            ORDER BY n.id
            LIMIT 1
            FOR UPDATE SKIP LOCKED)
        RETURNING {columns}
        """  # noqa: S608 - constants of this module
    )


_CLAIM_NEXT_INBOUND = _claim_next("in", "'received'", "answering", "", _INBOUND_COLUMNS)
_CLAIM_NEXT_OUTBOUND = _claim_next(
    "out",
    "'queued'",
    "sending",
    "AND n.author IN ('bot', 'staff') AND n.channel <> ALL(CAST(:busy AS text[]))",
    _OUTBOUND_COLUMNS,
)
_CLAIM_INBOUND = text(
    f"""
    {_take("answering")}, error = NULL
    WHERE m.id = :id AND {_free("m", "'received', 'failed'", "answering", capped=False)}
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
    tier: str | None = None  # set on the bot's answers (not on greetings, nor staff replies)


@dataclass(frozen=True)
class QueueDepths:
    inbox: int  # questions received or being answered
    outbox: int  # replies queued or being sent


@dataclass(frozen=True)
class GivenUp:
    """A row the sweep marked ``failed``: its claims ran out before one finished."""

    id: int
    channel: str
    direction: str
    attempts: int


def _inbound(row: Any) -> ClaimedInbound:
    return ClaimedInbound(
        id=int(row.id),
        conversation_id=int(row.conversation_id),
        channel=str(row.channel),
        kind=str(row.kind),
        text=str(row.text),
        attempts=int(row.attempts),
    )


async def claim_next_inbound(
    session: AsyncSession, lease_s: float, *, max_attempts: int
) -> ClaimedInbound | None:
    """The next question to answer, in arrival order within its conversation, among those
    claimed fewer than ``max_attempts`` times; None: none."""
    params = {"lease": lease_s, "max_attempts": max_attempts}
    row = (await session.execute(_CLAIM_NEXT_INBOUND, params)).first()
    return None if row is None else _inbound(row)


async def claim_next_outbound(
    session: AsyncSession, lease_s: float, *, max_attempts: int, busy: Sequence[str] = ()
) -> ClaimedOutbound | None:
    """The next bot or staff reply to send, in order within its conversation, on a channel
    not in ``busy`` (whose senders are all taken); None: none."""
    params = {"lease": lease_s, "max_attempts": max_attempts, "busy": list(busy)}
    row = (await session.execute(_CLAIM_NEXT_OUTBOUND, params)).first()
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
        tier=None if row.tier is None else str(row.tier),
    )


async def claim_inbound(
    session: AsyncSession, message_id: int, lease_s: float
) -> ClaimedInbound | None:
    """Take this question to answer (new, failed before, or left by a claimer whose lease ran
    out); None while another claim holds it or once it is answered. Not capped: the visitor
    sending it again is asking for the retry."""
    row = (await session.execute(_CLAIM_INBOUND, {"id": message_id, "lease": lease_s})).first()
    return None if row is None else _inbound(row)


async def claim_plan(session: AsyncSession, lease_s: float, *, max_attempts: int) -> str:
    """The planner's plan for the worker's next-question claim (EXPLAIN, nothing claimed):
    for operations and tests, to see that the ordering check reads the index."""
    explain = text(f"EXPLAIN {_CLAIM_NEXT_INBOUND.text}")
    rows = await session.execute(explain, {"lease": lease_s, "max_attempts": max_attempts})
    return "\n".join(str(r[0]) for r in rows)


Claim = ClaimedInbound | ClaimedOutbound


def _working(claim: Claim) -> str:
    return "answering" if isinstance(claim, ClaimedInbound) else "sending"


_RENEW = text(
    "UPDATE messages SET lease_until = now() + make_interval(secs => :lease) "
    "WHERE id = :id AND status = CAST(:working AS message_status) AND attempts = :attempts "
    "RETURNING id"
)


async def renew_lease(session: AsyncSession, claim: Claim, lease_s: float) -> bool:
    """Extend the lease of a claim still at work; False if the claim no longer holds the row
    (its lease ran out and another claimer took it, or it was closed)."""
    params = {
        "id": claim.id,
        "working": _working(claim),
        "attempts": claim.attempts,
        "lease": lease_s,
    }
    return (await session.scalar(_RENEW, params)) is not None


async def finish_inbound(
    session: AsyncSession, claim: ClaimedInbound, status: str, error: str | None
) -> bool:
    """Close a question without a reply (``skipped``, ``failed``), if the claim still holds;
    False: a late claim, nothing changed."""
    closed = await session.scalar(
        text(
            "UPDATE messages SET status = CAST(:status AS message_status), "
            "done_at = now(), error = :error, lease_until = NULL "
            "WHERE id = :id AND status = 'answering' AND attempts = :attempts RETURNING id"
        ),
        {"id": claim.id, "status": status, "error": error, "attempts": claim.attempts},
    )
    return closed is not None


async def retry_inbound(
    session: AsyncSession, claim: ClaimedInbound, error: str, at: datetime
) -> bool:
    """Put a question back in the queue, to be claimed again from ``at``, if the claim still
    holds; False: a late claim, nothing changed."""
    queued = await session.scalar(
        text(
            "UPDATE messages SET status = 'received', error = :error, lease_until = NULL, "
            "next_attempt_at = :at "
            "WHERE id = :id AND status = 'answering' AND attempts = :attempts RETURNING id"
        ),
        {"id": claim.id, "error": error[:1000], "at": at, "attempts": claim.attempts},
    )
    return queued is not None


async def skip_inbound(session: AsyncSession, message_id: int) -> None:
    """Close a question nobody will answer by bot (a person has the conversation)."""
    await session.execute(
        text("UPDATE messages SET status = 'skipped', done_at = clock_timestamp() WHERE id = :id"),
        {"id": message_id},
    )


async def finish_outbound(
    session: AsyncSession,
    claim: ClaimedOutbound,
    status: str,
    error: str | None,
    external_ids: Sequence[str] = (),
) -> bool:
    """Close a reply: ``sent`` (with the platform's message ids), ``undeliverable``,
    ``failed``; False: a late claim, nothing changed."""
    closed = await session.scalar(
        text(
            "UPDATE messages SET status = CAST(:status AS message_status), error = :error, "
            "done_at = now(), lease_until = NULL, "
            "details = details || jsonb_build_object('external_ids', CAST(:ids AS jsonb)) "
            "WHERE id = :id AND status = 'sending' AND attempts = :attempts RETURNING id"
        ),
        {
            "id": claim.id,
            "attempts": claim.attempts,
            "status": status,
            "error": error[:1000] if error else None,
            "ids": json.dumps(list(external_ids), ensure_ascii=False),
        },
    )
    return closed is not None


async def record_parts_sent(
    session: AsyncSession, claim: ClaimedOutbound, parts_sent: int, lease_s: float
) -> bool:
    """After each part a platform accepted: how many parts are delivered (a retry resumes
    after them), and the lease renewed; False: a late claim, nothing changed."""
    recorded = await session.scalar(
        text(
            "UPDATE messages SET lease_until = now() + make_interval(secs => :lease), "
            "details = details || jsonb_build_object('parts_sent', :parts) "
            "WHERE id = :id AND status = 'sending' AND attempts = :attempts RETURNING id"
        ),
        {"id": claim.id, "attempts": claim.attempts, "parts": parts_sent, "lease": lease_s},
    )
    return recorded is not None


async def retry_outbound(
    session: AsyncSession, claim: ClaimedOutbound, error: str, parts_sent: int, at: datetime
) -> bool:
    """Queue a reply again from ``at``; the parts already delivered are not sent again.
    False: a late claim, nothing changed."""
    queued = await session.scalar(
        text(
            "UPDATE messages SET status = 'queued', error = :error, "
            "lease_until = NULL, next_attempt_at = :at, "
            "details = details || jsonb_build_object('parts_sent', "
            "  GREATEST(:parts, COALESCE((details ->> 'parts_sent')::int, 0))) "
            "WHERE id = :id AND status = 'sending' AND attempts = :attempts RETURNING id"
        ),
        {
            "id": claim.id,
            "attempts": claim.attempts,
            "parts": parts_sent,
            "error": error[:1000],
            "at": at,
        },
    )
    return queued is not None


async def release_outbound(session: AsyncSession, claim: ClaimedOutbound) -> bool:
    """Give a reply back to the queue at once (the worker stops): free for the next claimer
    without waiting for the lease; the attempt stays counted. False: a late claim."""
    released = await session.scalar(
        text(
            "UPDATE messages SET status = 'queued', lease_until = NULL "
            "WHERE id = :id AND status = 'sending' AND attempts = :attempts RETURNING id"
        ),
        {"id": claim.id, "attempts": claim.attempts},
    )
    return released is not None


# A row whose claims reached the cap and that nobody holds any more: given up. The partial
# queue indexes answer it (only rows still to do); a row another sweep is changing is waited
# for and re-checked, so several workers sweeping at once mark each row once.
_FAIL_EXHAUSTED = text(
    """
    UPDATE messages SET status = 'failed', done_at = now(), lease_until = NULL,
           error = left('gave up after ' || attempts || ' claims without a result'
                        || COALESCE('; last error: ' || error, ''), 1000)
    WHERE status IN ('received', 'answering', 'queued', 'sending')
      AND attempts >= :max_attempts
      AND (status IN ('received', 'queued') OR lease_until IS NULL OR lease_until < now())
    RETURNING id, channel, direction::text AS direction, attempts
    """
)


async def fail_exhausted(session: AsyncSession, max_attempts: int) -> list[GivenUp]:
    """Mark ``failed`` every row claimed ``max_attempts`` times whose last claim is over (its
    lease ran out: the claimer crashed or hung), so that its conversation goes on."""
    rows = (await session.execute(_FAIL_EXHAUSTED, {"max_attempts": max_attempts})).all()
    return [GivenUp(int(r.id), str(r.channel), str(r.direction), int(r.attempts)) for r in rows]


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
