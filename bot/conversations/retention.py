"""Retention: how long personal data stays, and the prune that enforces it.

One use-case, called by ``tuvan prune`` and by the worker's daily schedule
(``bot.worker.prune_schedule``). What each table keeps (``RetentionSettings``):

- ``messages``: deleted after ``messages_days``;
- ``messages.raw`` (the platform's payload: names, phone numbers): emptied to ``{}`` after
  ``raw_days``, the message itself staying; webhook events kept in quarantine (whole raw
  bodies) are deleted after the same period;
- ``contacts``: deleted with their conversation once no message is left (or every message
  left is due) and the conversation has been quiet for ``contacts_days``;
- ``login_attempts``: deleted after ``login_attempts_days``.

Kept whatever the settings say: rows still being worked on (questions received or being
answered, replies queued or being sent) and everything in a conversation a person has (taken
over by staff, paused for a staff reply, waiting for staff). Not pruned, by decision: the
``audit_log`` (who changed the FAQ, documents and accounts: the FAQ history and the staff's
accountability; it holds staff e-mails, no student's data), the knowledge tables (FAQ,
documents, chunks: not personal), ``channel_tokens`` (the platforms' credentials), and
``staff_sessions`` (expired ones are already deleted at each admin login).

Each step deletes or empties at most ``batch_size`` rows per statement, each in its own short
transaction, and skips rows another transaction holds (``SKIP LOCKED``): a prune never keeps a
busy table locked. The batch's ids are collected first (``= ANY(ARRAY(...))``) so the statement
reaches its rows by primary key: with ``IN (subquery)`` PostgreSQL hashes the batch and scans the
whole table for every batch. A transaction-level advisory lock, held on a separate connection for
the whole prune, lets only one prune run at a time across every process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, TextClause, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.core.clock import utcnow
from bot.core.metrics import METRICS
from bot.core.settings import RetentionSettings

# pg_try_advisory_xact_lock's key for the prune: any constant no other lock of tuvan uses.
PRUNE_LOCK_KEY = 0x7475_7661_6E00_0010

# Statuses of rows a worker still has to handle (bot.db.models.MessageStatus).
_PENDING = "('received', 'answering', 'queued', 'sending')"

# A conversation nobody but the bot is handling: not taken over, not paused for a staff
# reply, not waiting for staff.
_BOT_ONLY = (
    "c.mode = 'bot' AND c.waiting_since IS NULL "
    "AND (c.paused_until IS NULL OR c.paused_until <= :now)"
)

_MESSAGES_DUE = f"""
    FROM messages m JOIN conversations c ON c.id = m.conversation_id
    WHERE m.created_at < :cutoff AND m.status NOT IN {_PENDING} AND {_BOT_ONLY}
"""

_RAW_DUE = f"""
    FROM messages m
    WHERE m.created_at < :cutoff AND m.raw <> '{{}}'::jsonb AND m.status NOT IN {_PENDING}
"""

# A conversation quiet since the cutoff with no message that the prune keeps: none at all, or
# only messages due for deletion (``kept_since`` is the messages' cutoff; NULL: all are kept).
# ``updated_at`` moves with every inbound event (bot.conversations.store), and the locking
# subquery re-checks it on a row updated meanwhile, so a contact who writes again while the
# prune runs is not deleted.
_CONTACTS_DUE = f"""
    FROM conversations c JOIN contacts k ON k.id = c.contact_id
    WHERE {_BOT_ONLY}
      AND c.updated_at < :cutoff AND coalesce(c.last_inbound_at, c.created_at) < :cutoff
      AND NOT EXISTS (
          SELECT 1 FROM messages m WHERE m.conversation_id = c.id
          AND (CAST(:kept_since AS timestamptz) IS NULL OR m.created_at >= :kept_since
               OR m.status IN {_PENDING}))
"""  # noqa: S608 - constant fragments of this module

_QUARANTINE_DUE = """
    FROM quarantined_events q WHERE q.received_at < :cutoff
"""

_LOGIN_ATTEMPTS_DUE = """
    FROM login_attempts a WHERE a.at < :cutoff
"""


@dataclass(frozen=True)
class PruneStep:
    """One kind of data pruned: how to count what is due, and how to remove one batch."""

    name: str  # as reported and as the metric's label
    what: str  # "messages older than {days} days", for people
    days_setting: str  # the RetentionSettings field giving the period
    count: TextClause
    batch: TextClause
    verb: str = "deleted"


STEPS: tuple[PruneStep, ...] = (
    PruneStep(
        "messages",
        "messages older than {days} days",
        "messages_days",
        text(f"SELECT count(*) {_MESSAGES_DUE}"),
        text(
            f"""DELETE FROM messages WHERE id = ANY(ARRAY
            (SELECT m.id {_MESSAGES_DUE} LIMIT :batch FOR UPDATE OF m SKIP LOCKED))"""  # noqa: S608 - constant fragments
        ),
    ),
    PruneStep(
        "raw_payloads",
        "raw platform payloads older than {days} days",
        "raw_days",
        # Not counting the messages this prune deletes before it empties payloads.
        text(
            f"""SELECT count(*) {_RAW_DUE}
            AND (CAST(:kept_since AS timestamptz) IS NULL OR m.created_at >= :kept_since
                 OR NOT EXISTS (SELECT 1 FROM conversations c
                                WHERE c.id = m.conversation_id AND {_BOT_ONLY}))"""  # noqa: S608 - constant fragments
        ),
        text(
            f"""UPDATE messages SET raw = '{{}}'::jsonb WHERE id = ANY(ARRAY
            (SELECT m.id {_RAW_DUE} LIMIT :batch FOR UPDATE OF m SKIP LOCKED))"""  # noqa: S608 - constant fragments
        ),
        verb="emptied",
    ),
    PruneStep(
        "contacts",
        "contacts with no message left, quiet for {days} days (with their conversation)",
        "contacts_days",
        text(f"SELECT count(*) {_CONTACTS_DUE}"),
        # Both rows are locked: an inbound event upserting them meanwhile waits and then
        # stores a new contact, instead of the cascade deleting what it just wrote.
        text(
            f"""DELETE FROM contacts WHERE id = ANY(ARRAY
            (SELECT k.id {_CONTACTS_DUE} LIMIT :batch FOR UPDATE OF c, k SKIP LOCKED))"""  # noqa: S608 - constant fragments
        ),
    ),
    # Webhook bodies kept in quarantine are raw payloads too (names, phone numbers).
    PruneStep(
        "quarantined_events",
        "quarantined webhook events older than {days} days",
        "raw_days",
        text(f"SELECT count(*) {_QUARANTINE_DUE}"),
        text(
            f"""DELETE FROM quarantined_events WHERE id = ANY(ARRAY
            (SELECT q.id {_QUARANTINE_DUE} LIMIT :batch FOR UPDATE SKIP LOCKED))"""  # noqa: S608 - constant fragments
        ),
    ),
    PruneStep(
        "login_attempts",
        "admin login attempts older than {days} days",
        "login_attempts_days",
        text(f"SELECT count(*) {_LOGIN_ATTEMPTS_DUE}"),
        text(
            f"""DELETE FROM login_attempts WHERE id = ANY(ARRAY
            (SELECT a.id {_LOGIN_ATTEMPTS_DUE} LIMIT :batch FOR UPDATE SKIP LOCKED))"""  # noqa: S608 - constant fragments
        ),
    ),
)


@dataclass(frozen=True)
class PruneCount:
    step: PruneStep
    days: int | None  # None: kept forever, nothing counted
    rows: int

    def line(self, *, dry_run: bool) -> str:
        if self.days is None:
            name = f"TUVAN_RETENTION__{self.step.days_setting.upper()}"
            return f"{self.step.name}: kept forever ({name} is 0)"
        what = self.step.what.format(days=self.days)
        done = f"would be {self.step.verb}" if dry_run else self.step.verb
        return f"{what}: {self.rows} {done}"


@dataclass(frozen=True)
class PruneReport:
    dry_run: bool
    counts: tuple[PruneCount, ...]

    def rows(self, name: str) -> int:
        return next(c.rows for c in self.counts if c.step.name == name)

    def lines(self) -> list[str]:
        return [c.line(dry_run=self.dry_run) for c in self.counts]


def period_days(policy: RetentionSettings, setting: str) -> int | None:
    """A period in days, or None for "keep forever" (0 or unset)."""
    days = cast(int | None, getattr(policy, setting))
    return days or None


def _params(policy: RetentionSettings, step: PruneStep, now: datetime) -> dict[str, Any] | None:
    days = period_days(policy, step.days_setting)
    if days is None:
        return None
    messages_days = period_days(policy, "messages_days")
    return {
        "now": now,
        "cutoff": now - timedelta(days=days),
        "kept_since": now - timedelta(days=messages_days) if messages_days else None,
    }


async def count_due(
    sessionmaker: async_sessionmaker[AsyncSession],
    policy: RetentionSettings,
    *,
    now: datetime | None = None,
) -> PruneReport:
    """What a prune would remove now, changing nothing (``tuvan prune --dry-run``)."""
    now = now or utcnow()
    counts = []
    async with sessionmaker() as session:
        for step in STEPS:
            params = _params(policy, step, now)
            rows = 0
            if params is not None:
                rows = int(await session.scalar(step.count, params) or 0)
            counts.append(PruneCount(step, period_days(policy, step.days_setting), rows))
    return PruneReport(dry_run=True, counts=tuple(counts))


@asynccontextmanager
async def prune_lock(engine: AsyncEngine) -> AsyncIterator[bool]:
    """Whether this process may prune now: True while it holds the advisory lock.

    The lock is transaction-level on a connection of its own, so it goes with that
    transaction however the prune ends (an error, a cancelled task, a killed process)."""
    async with engine.connect() as conn, conn.begin():
        got = await conn.scalar(
            text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": PRUNE_LOCK_KEY}
        )
        yield bool(got)


async def _remove(
    sessionmaker: async_sessionmaker[AsyncSession],
    step: PruneStep,
    params: dict[str, Any],
    batch_size: int,
) -> int:
    """Run a step's batch until a batch removes fewer rows than it may; the rows removed."""
    total = 0
    while True:
        async with sessionmaker.begin() as session:
            result = cast(
                CursorResult[Any],
                await session.execute(step.batch, {**params, "batch": batch_size}),
            )
        total += result.rowcount
        if result.rowcount < batch_size:
            return total


async def prune(
    sessionmaker: async_sessionmaker[AsyncSession],
    engine: AsyncEngine,
    policy: RetentionSettings,
    *,
    batch_size: int | None = None,
    now: datetime | None = None,
) -> PruneReport | None:
    """Delete and empty what the policy no longer keeps; None if another prune is running.

    ``engine`` gives the lock's own connection; ``sessionmaker`` the batches' sessions."""
    now = now or utcnow()
    size = batch_size or policy.batch_size
    async with prune_lock(engine) as mine:
        if not mine:
            return None
        counts = []
        for step in STEPS:
            params = _params(policy, step, now)
            rows = 0
            if params is not None:
                rows = await _remove(sessionmaker, step, params, size)
                METRICS.inc("tuvan_pruned_rows_total", rows, kind=step.name)
            counts.append(PruneCount(step, period_days(policy, step.days_setting), rows))
    return PruneReport(dry_run=False, counts=tuple(counts))
