"""The prune (bot.conversations.retention) on a real PostgreSQL, inside the test's rolled-back
transaction; its lock on a connection of its own, as in production."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.conversations.retention import PruneReport, count_due, prune, prune_lock
from bot.core.clock import utcnow
from bot.core.settings import RetentionSettings

POLICY = RetentionSettings()  # the defaults: 365 / 30 / 30 / 30 days
NOW = utcnow()
RAW = {"message": {"from": {"first_name": "Lan", "phone_number": "+84901234567"}}}


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


async def conversation(
    session: AsyncSession,
    *,
    quiet_days: float = 1,
    mode: str = "bot",
    waiting: bool = False,
    paused: bool = False,
) -> int:
    """A contact and its conversation, last active ``quiet_days`` ago."""
    contact_id = await session.scalar(
        text(
            "INSERT INTO contacts (channel, external_id, name, created_at) "
            "VALUES ('web', :ext, 'Lan', :at) RETURNING id"
        ),
        {"ext": f"test-retention-{uuid.uuid4().hex}", "at": ago(quiet_days)},
    )
    conversation_id = await session.scalar(
        text(
            "INSERT INTO conversations (contact_id, channel, mode, waiting_since, paused_until, "
            "last_inbound_at, created_at, updated_at) VALUES (:contact, 'web', "
            "CAST(:mode AS conversation_mode), :waiting, :paused, :at, :at, :at) RETURNING id"
        ),
        {
            "contact": contact_id,
            "mode": mode,
            "waiting": ago(quiet_days) if waiting else None,
            "paused": NOW + timedelta(minutes=30) if paused else None,
            "at": ago(quiet_days),
        },
    )
    return int(conversation_id or 0)


async def message(
    session: AsyncSession,
    conversation_id: int,
    *,
    days_old: float,
    status: str = "answered",
    raw: dict[str, Any] | None = None,
) -> int:
    outbound = status in ("queued", "sending", "sent")
    message_id = await session.scalar(
        text(
            "INSERT INTO messages (conversation_id, channel, direction, author, text, status, "
            "raw, created_at) VALUES (:conv, 'web', CAST(:direction AS message_direction), "
            "CAST(:author AS message_author), 'Học phí bao nhiêu?', "
            "CAST(:status AS message_status), CAST(:raw AS jsonb), :at) RETURNING id"
        ),
        {
            "conv": conversation_id,
            "direction": "out" if outbound else "in",
            "author": "bot" if outbound else "user",
            "status": status,
            "raw": json.dumps(RAW if raw is None else raw),
            "at": ago(days_old),
        },
    )
    return int(message_id or 0)


async def login_attempt(session: AsyncSession, *, days_old: float) -> int:
    attempt_id = await session.scalar(
        text(
            "INSERT INTO login_attempts (email, ip, succeeded, at) "
            "VALUES ('staff@shut.example.vn', '203.0.113.7', false, :at) RETURNING id"
        ),
        {"at": ago(days_old)},
    )
    return int(attempt_id or 0)


async def exists(session: AsyncSession, table: str, row_id: int) -> bool:
    found = await session.scalar(
        text(f"SELECT count(*) FROM {table} WHERE id = :id"),
        {"id": row_id},
    )
    return bool(found == 1)


async def raw_of(session: AsyncSession, message_id: int) -> dict[str, Any]:
    raw = await session.scalar(text("SELECT raw FROM messages WHERE id = :id"), {"id": message_id})
    assert isinstance(raw, dict)
    return raw


async def pruned(
    sessionmaker: async_sessionmaker[AsyncSession],
    engine: AsyncEngine,
    policy: RetentionSettings = POLICY,
    **kwargs: Any,
) -> PruneReport:
    report = await prune(sessionmaker, engine, policy, now=NOW, **kwargs)
    assert report is not None
    return report


@pytest.fixture(autouse=True)
async def nothing_due_yet(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    """Rows other tests committed to the shared database are pruned first (inside this test's
    transaction, so rolled back with it): the counts below are this test's rows alone."""
    await pruned(sessionmaker, engine)


async def test_old_messages_are_deleted_and_recent_ones_kept(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    conv = await conversation(session)
    old_question = await message(session, conv, days_old=400)
    old_reply = await message(session, conv, days_old=400, status="sent")
    recent = await message(session, conv, days_old=10, raw={})
    await session.commit()
    report = await pruned(sessionmaker, engine)
    assert report.rows("messages") == 2
    assert not await exists(session, "messages", old_question)
    assert not await exists(session, "messages", old_reply)
    assert await exists(session, "messages", recent)
    assert await exists(session, "conversations", conv)  # it still has a message
    assert "messages older than 365 days: 2 deleted" in report.lines()


async def test_raw_payloads_are_emptied_after_their_period_while_the_message_stays(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    conv = await conversation(session)
    old = await message(session, conv, days_old=40)
    recent = await message(session, conv, days_old=5)
    await session.commit()
    report = await pruned(sessionmaker, engine)
    assert report.rows("raw_payloads") == 1
    assert await exists(session, "messages", old)
    assert await raw_of(session, old) == {}
    assert await raw_of(session, recent) == RAW


async def test_a_contact_with_no_message_left_is_deleted_with_its_conversation(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    gone = await conversation(session, quiet_days=400)
    await message(session, gone, days_old=400)  # deleted by this prune, then the contact
    empty = await conversation(session, quiet_days=60)  # never wrote anything we kept
    active = await conversation(session, quiet_days=400)
    await message(session, active, days_old=3)
    fresh = await conversation(session, quiet_days=5)  # quiet for less than 30 days
    contacts = {
        conv: await session.scalar(
            text("SELECT contact_id FROM conversations WHERE id = :id"), {"id": conv}
        )
        for conv in (gone, empty, active, fresh)
    }
    await session.commit()
    report = await pruned(sessionmaker, engine)
    assert report.rows("contacts") == 2
    for conv in (gone, empty):
        assert not await exists(session, "conversations", conv)
        assert not await exists(session, "contacts", int(contacts[conv] or 0))
    for conv in (active, fresh):
        assert await exists(session, "conversations", conv)
        assert await exists(session, "contacts", int(contacts[conv] or 0))


async def test_pending_rows_and_conversations_a_person_has_are_kept(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    bot = await conversation(session, quiet_days=400)
    pending = [
        await message(session, bot, days_old=400, status=status)
        for status in ("received", "answering", "queued", "sending")
    ]
    human = await conversation(session, quiet_days=400, mode="human")
    waiting = await conversation(session, quiet_days=400, waiting=True)
    paused = await conversation(session, quiet_days=400, paused=True)
    taken = [await message(session, conv, days_old=400) for conv in (human, waiting, paused)]
    empty_human = await conversation(session, quiet_days=400, mode="human")
    await session.commit()
    report = await pruned(sessionmaker, engine)
    assert (report.rows("messages"), report.rows("contacts")) == (0, 0)
    for message_id in (*pending, *taken):
        assert await exists(session, "messages", message_id)
    for conv in (bot, human, waiting, paused, empty_human):
        assert await exists(session, "conversations", conv)
    # A message in hand keeps its payload; a person's conversation does not need the
    # platform's copy of the student's name and number (the admin never shows it).
    assert all([await raw_of(session, m) == RAW for m in pending])
    assert all([await raw_of(session, m) == {} for m in taken])


async def test_old_login_attempts_are_deleted(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    old = await login_attempt(session, days_old=31)
    recent = await login_attempt(session, days_old=1)
    await session.commit()
    report = await pruned(sessionmaker, engine)
    assert report.rows("login_attempts") == 1
    assert not await exists(session, "login_attempts", old)
    assert await exists(session, "login_attempts", recent)


async def quarantined(session: AsyncSession, *, days_old: float) -> int:
    event_id = await session.scalar(
        text(
            "INSERT INTO quarantined_events (channel, location, reason, raw_body, fingerprint, "
            "received_at) VALUES ('messenger', 'entry[0]', 'mid too long', :body, :fp, :at) "
            "RETURNING id"
        ),
        {"body": json.dumps(RAW), "fp": uuid.uuid4().hex, "at": ago(days_old)},
    )
    return int(event_id or 0)


async def test_quarantined_webhook_bodies_are_deleted_after_the_raw_period(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    old = await quarantined(session, days_old=31)
    recent = await quarantined(session, days_old=1)
    await session.commit()
    report = await pruned(sessionmaker, engine)
    assert report.rows("quarantined_events") == 1
    assert not await exists(session, "quarantined_events", old)
    assert await exists(session, "quarantined_events", recent)


async def test_dry_run_counts_what_a_prune_removes_and_changes_nothing(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    conv = await conversation(session, quiet_days=400)
    rows = [await message(session, conv, days_old=400) for _ in range(3)]
    kept = await conversation(session)
    old_raw = await message(session, kept, days_old=100)
    attempt = await login_attempt(session, days_old=90)
    await session.commit()
    counted = await count_due(sessionmaker, POLICY, now=NOW)
    # The 3 year-old messages are deleted, not emptied: one payload to empty.
    expected = {
        "messages": 3,
        "raw_payloads": 1,
        "contacts": 1,
        "quarantined_events": 0,
        "login_attempts": 1,
    }
    assert {c.step.name: c.rows for c in counted.counts} == expected
    assert "messages older than 365 days: 3 would be deleted" in counted.lines()
    for message_id in (*rows, old_raw):
        assert await raw_of(session, message_id) == RAW
    assert await exists(session, "conversations", conv)
    assert await exists(session, "login_attempts", attempt)
    # ... and the prune then removes exactly what was counted.
    report = await pruned(sessionmaker, engine)
    assert {c.step.name: c.rows for c in report.counts} == expected


async def test_batches_smaller_than_the_rows_remove_them_all(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    conv = await conversation(session)
    old = [await message(session, conv, days_old=400) for _ in range(7)]
    stripped = [await message(session, conv, days_old=40) for _ in range(5)]
    await session.commit()
    report = await pruned(sessionmaker, engine, batch_size=2)
    assert (report.rows("messages"), report.rows("raw_payloads")) == (7, 5)
    assert not any([await exists(session, "messages", m) for m in old])
    assert all([await raw_of(session, m) == {} for m in stripped])


async def test_a_period_of_zero_keeps_that_data_forever(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    conv = await conversation(session, quiet_days=4000)
    old = await message(session, conv, days_old=4000)
    attempt = await login_attempt(session, days_old=4000)
    await session.commit()
    forever = RetentionSettings(messages_days=0, raw_days=None, login_attempts_days=0)
    report = await pruned(sessionmaker, engine, forever)
    assert await exists(session, "messages", old)
    assert await raw_of(session, old) == RAW
    assert await exists(session, "login_attempts", attempt)
    assert await exists(session, "conversations", conv)  # it still has its message
    assert "messages: kept forever (TUVAN_RETENTION__MESSAGES_DAYS is 0)" in report.lines()


async def test_only_one_prune_runs_at_a_time(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    conv = await conversation(session)
    old = await message(session, conv, days_old=400)
    await session.commit()
    async with prune_lock(engine) as first:  # another process pruning, on its own connection
        assert first
        async with prune_lock(engine) as second:
            assert not second
        assert await prune(sessionmaker, engine, POLICY, now=NOW) is None
        assert await exists(session, "messages", old)
    # Released with its transaction: the next prune runs.
    assert (await pruned(sessionmaker, engine)).rows("messages") == 1
    assert not await exists(session, "messages", old)
