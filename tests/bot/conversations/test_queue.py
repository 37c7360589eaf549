"""The queues' one lease rule, on a real PostgreSQL inside the test's rolled-back transaction
(the worker's concurrency over real commits is tested in tests/bot/worker/)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.queue import (
    claim_inbound,
    claim_next_inbound,
    finish_inbound,
    queue_depths,
)
from bot.conversations.store import record_inbound
from bot.core.messages import InboundMessage

LEASE_S = 60.0


@pytest.fixture(autouse=True)
async def empty_queue(session: AsyncSession) -> None:
    """Only this test's questions wait (rolled back with the test, like everything else)."""
    await session.execute(
        text("UPDATE messages SET status = 'skipped' WHERE status IN ('received', 'answering')")
    )


async def question(session: AsyncSession, text_: str = "Học phí bao nhiêu?") -> int:
    recorded = await record_inbound(
        session,
        InboundMessage(
            channel="web",
            event_id=str(uuid.uuid4()),
            external_user_id=f"test-queue-{uuid.uuid4().hex[:8]}",
            kind="text",
            text=text_,
        ),
    )
    assert recorded.message_id is not None
    return recorded.message_id


async def lease_runs_out(session: AsyncSession, message_id: int) -> None:
    await session.execute(
        text("UPDATE messages SET lease_until = now() - interval '1 second' WHERE id = :id"),
        {"id": message_id},
    )


async def status_of(session: AsyncSession, message_id: int) -> tuple[str, int]:
    row = (
        await session.execute(
            text("SELECT status::text, attempts FROM messages WHERE id = :id"), {"id": message_id}
        )
    ).one()
    return str(row[0]), int(row[1])


async def test_a_claimed_question_is_free_again_only_when_its_lease_runs_out(
    session: AsyncSession,
) -> None:
    message_id = await question(session)
    first = await claim_inbound(session, message_id, LEASE_S)
    assert first is not None
    assert first.attempts == 1
    # The same rule for the web chat's claim and the worker's.
    assert await claim_inbound(session, message_id, LEASE_S) is None
    assert await claim_next_inbound(session, LEASE_S) is None
    await lease_runs_out(session, message_id)
    second = await claim_next_inbound(session, LEASE_S)
    assert second is not None
    assert (second.id, second.attempts) == (message_id, 2)


async def test_a_late_claim_cannot_close_the_question(session: AsyncSession) -> None:
    message_id = await question(session)
    late = await claim_inbound(session, message_id, LEASE_S)
    assert late is not None
    await lease_runs_out(session, message_id)
    assert await claim_inbound(session, message_id, LEASE_S) is not None
    await finish_inbound(session, late, "failed", "too late")
    assert await status_of(session, message_id) == ("answering", 2)


async def test_a_failed_question_is_left_by_the_worker_but_retried_by_the_web_chat(
    session: AsyncSession,
) -> None:
    message_id = await question(session)
    claimed = await claim_inbound(session, message_id, LEASE_S)
    assert claimed is not None
    await finish_inbound(session, claimed, "failed", "gave up")
    assert await claim_next_inbound(session, LEASE_S) is None
    again = await claim_inbound(session, message_id, LEASE_S)
    assert again is not None
    assert await status_of(session, message_id) == ("answering", 2)


async def test_queue_depths_count_questions_waiting_or_being_answered(
    session: AsyncSession,
) -> None:
    before = await queue_depths(session)
    first = await question(session)
    await question(session, "Ký túc xá ở đâu?")
    assert await claim_inbound(session, first, LEASE_S) is not None
    after = await queue_depths(session)
    assert (after.inbox - before.inbox, after.outbox - before.outbox) == (2, 0)
