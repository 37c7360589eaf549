"""Webhooks' events stored together (bot.conversations.inbound_batch): the same rows, rules and
outcomes as one by one, in fewer transactions; a bad event fails alone; an outage reaches
every caller. Real commits on the session's PostgreSQL, taken away after each test."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, OperationalError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.conversations.inbound_batch import InboundBatcher
from bot.conversations.quarantine import unstorable
from bot.core.messages import InboundMessage
from bot.db.engine import make_engine
from tests.admin._support import delete_rows_since, rows_since


@pytest.fixture
async def committed(engine: AsyncEngine) -> AsyncIterator[AsyncEngine]:
    marks = await rows_since(engine)
    try:
        yield engine
    finally:
        await delete_rows_since(engine, marks)


def update(user: str, text_: str, event_id: str | None = None) -> InboundMessage:
    return InboundMessage(
        channel="telegram",
        event_id=event_id or f"batch-{uuid.uuid4().hex}",
        external_user_id=user,
        kind="text",
        text=text_,
    )


async def test_concurrent_events_share_transactions_and_each_is_stored_once(
    committed: AsyncEngine,
) -> None:
    batcher = InboundBatcher(committed)
    users = [f"batch-user-{uuid.uuid4().hex[:8]}" for _ in range(30)]
    first = [update(user, f"câu hỏi {i}") for i, user in enumerate(users)]
    results = await asyncio.gather(*(batcher.record(m) for m in first))
    assert all(r.message_id is not None for r in results)
    assert len({r.message_id for r in results}) == 30
    assert len({r.conversation_id for r in results}) == 30
    assert 1 <= batcher.batches < 30  # gathered together, not one transaction each
    # The platform delivers the same updates again: recognised, stored once.
    again = await asyncio.gather(*(batcher.record(m) for m in first))
    assert [r.message_id for r in again] == [None] * 30
    async with committed.connect() as conn:
        stored = await conn.scalar(
            text("SELECT count(*) FROM messages WHERE event_id LIKE 'batch-%' AND text LIKE 'câu%'")
        )
    assert stored == 30


async def test_a_burst_in_one_chat_keeps_the_caps_and_one_notice(committed: AsyncEngine) -> None:
    batcher = InboundBatcher(committed)
    user = f"batch-burst-{uuid.uuid4().hex[:8]}"
    burst = [update(user, f"câu {i}") for i in range(12)]
    results = await asyncio.gather(*(batcher.record(m, max_pending=3, flood=8) for m in burst))
    # In arrival order: the first 8 wait their turn, the next 4 are held past the flood cap,
    # and the first to find 3 waiting (the 4th) queues the one notice.
    assert [r.held for r in results] == [False] * 8 + [True] * 4
    assert [r.noticed for r in results].count(True) == 1
    assert results[3].noticed


async def test_an_event_the_database_refuses_fails_alone(committed: AsyncEngine) -> None:
    batcher = InboundBatcher(committed)
    good = [update(f"batch-ok-{uuid.uuid4().hex[:8]}", "học phí bao nhiêu") for _ in range(5)]
    bad = update(f"batch-bad-{uuid.uuid4().hex[:8]}", "nul \x00 byte")
    results = await asyncio.gather(
        *(batcher.record(m) for m in [*good[:2], bad, *good[2:]]), return_exceptions=True
    )
    refused = results[2]
    assert isinstance(refused, DBAPIError | StatementError | ValueError), refused
    assert unstorable(refused)  # quarantined and acknowledged by the webhook, not a 503
    stored = [r for i, r in enumerate(results) if i != 2]
    assert all(not isinstance(r, BaseException) and r.message_id is not None for r in stored)


async def test_an_outage_reaches_every_caller_as_the_database_s_error() -> None:
    engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")
    try:
        batcher = InboundBatcher(engine)
        results = await asyncio.gather(
            *(batcher.record(update("batch-outage", f"q{i}")) for i in range(3)),
            return_exceptions=True,
        )
    finally:
        await engine.dispose()
    assert all(isinstance(r, OperationalError) for r in results), results
    assert not any(unstorable(r) for r in results if isinstance(r, BaseException))


async def test_two_processes_batches_on_the_same_chats_neither_wait_on_each_other_nor_fail(
    committed: AsyncEngine, database_url: str
) -> None:
    """Two serve processes (two engines): their batches upsert the same contacts and
    conversations, in one order (sorted by sender), so neither deadlocks the other."""
    other = make_engine(database_url)
    try:
        batchers = [InboundBatcher(committed), InboundBatcher(other)]
        users = [f"batch-two-{uuid.uuid4().hex[:8]}" for _ in range(8)]
        rng = random.Random(5)
        sends = []
        for n in range(160):
            user = rng.choice(users)
            sends.append(batchers[n % 2].record(update(user, f"câu {n}")))
        results = await asyncio.gather(*sends)
    finally:
        await other.dispose()
    assert all(r.message_id is not None for r in results)
    assert [b.fallbacks for b in batchers] == [0, 0]
    assert all(b.batches < 80 for b in batchers)
