"""The queues' one lease rule, on a real PostgreSQL inside the test's rolled-back transaction
(the worker's concurrency over real commits is tested in tests/bot/worker/)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.inbound import WAITING_NOTICE, Recorded
from bot.conversations.queue import (
    claim_inbound,
    claim_next_inbound,
    claim_next_outbound,
    claim_plan,
    fail_exhausted,
    finish_inbound,
    finish_outbound,
    queue_depths,
    record_parts_sent,
    release_outbound,
    renew_lease,
    retry_inbound,
    retry_outbound,
    skip_inbound,
)
from bot.conversations.store import queue_staff_reply, record_inbound
from bot.core.clock import utcnow
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
    assert await claim_next_inbound(session, LEASE_S, max_attempts=5) is None
    await lease_runs_out(session, message_id)
    second = await claim_next_inbound(session, LEASE_S, max_attempts=5)
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
    assert await claim_next_inbound(session, LEASE_S, max_attempts=5) is None
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


# -- the attempt cap, the sweep, the fence, the ordering index -------------------------------


async def questions_of_one_student(session: AsyncSession, *texts: str) -> list[int]:
    user = f"test-queue-{uuid.uuid4().hex[:8]}"
    ids = []
    for text_ in texts:
        recorded = await record_inbound(
            session,
            InboundMessage(
                channel="web",
                event_id=str(uuid.uuid4()),
                external_user_id=user,
                kind="text",
                text=text_,
            ),
        )
        assert recorded.message_id is not None
        ids.append(recorded.message_id)
    return ids


async def test_claims_stop_at_the_cap_and_the_sweep_fails_the_row_and_frees_its_conversation(
    session: AsyncSession,
) -> None:
    poison, following = await questions_of_one_student(session, "Câu độc", "Học phí bao nhiêu?")
    for attempt in (1, 2, 3):  # a worker claims it and crashes, three times
        claimed = await claim_next_inbound(session, LEASE_S, max_attempts=3)
        assert claimed is not None
        assert (claimed.id, claimed.attempts) == (poison, attempt)
        await lease_runs_out(session, poison)
    # Claimed three times: never again; and the next question still waits behind it.
    assert await claim_next_inbound(session, LEASE_S, max_attempts=3) is None
    given_up = await fail_exhausted(session, max_attempts=3)
    assert [(g.id, g.direction, g.attempts) for g in given_up] == [(poison, "in", 3)]
    assert await status_of(session, poison) == ("failed", 3)
    error = await session.scalar(text("SELECT error FROM messages WHERE id = :id"), {"id": poison})
    assert error == "gave up after 3 claims without a result"
    assert await fail_exhausted(session, max_attempts=3) == []  # once only
    nxt = await claim_next_inbound(session, LEASE_S, max_attempts=3)
    assert nxt is not None
    assert nxt.id == following


async def test_the_sweep_leaves_a_last_claim_whose_lease_still_runs(
    session: AsyncSession,
) -> None:
    message_id = await question(session)
    assert await claim_next_inbound(session, LEASE_S, max_attempts=1) is not None
    assert await fail_exhausted(session, max_attempts=1) == []  # its claimer may still finish
    assert await status_of(session, message_id) == ("answering", 1)


async def test_a_late_claims_updates_change_nothing(session: AsyncSession) -> None:
    await session.execute(
        text("UPDATE messages SET status = 'sent' WHERE status IN ('queued', 'sending')")
    )
    [inbound] = await questions_of_one_student(session, "Xin chào")
    conversation_id = await session.scalar(
        text("SELECT conversation_id FROM messages WHERE id = :id"), {"id": inbound}
    )
    await skip_inbound(session, inbound)
    reply_id = await queue_staff_reply(session, conversation_id, "Chào bạn", "staff")
    late = await claim_next_outbound(session, LEASE_S, max_attempts=5)
    assert late is not None
    await lease_runs_out(session, reply_id)
    current = await claim_next_outbound(session, LEASE_S, max_attempts=5)
    assert current is not None
    assert (current.id, current.attempts) == (reply_id, 2)
    # The late claimer wakes up: every update it tries is fenced out.
    assert await record_parts_sent(session, late, 1, LEASE_S) is False
    assert await renew_lease(session, late, LEASE_S) is False
    assert await retry_outbound(session, late, "boom", 1, utcnow()) is False
    assert await finish_outbound(session, late, "failed", "late") is False
    assert await release_outbound(session, late) is False
    row = (
        await session.execute(
            text("SELECT status::text, attempts, error, details FROM messages WHERE id = :id"),
            {"id": reply_id},
        )
    ).one()
    assert (row.status, row.attempts, row.error, "parts_sent" in row.details) == (
        "sending",
        2,
        None,
        False,
    )
    assert await finish_outbound(session, current, "sent", None, ["m1"]) is True
    # And a question's late claim likewise.
    message_id = await question(session)
    late_q = await claim_inbound(session, message_id, LEASE_S)
    assert late_q is not None
    await lease_runs_out(session, message_id)
    assert await claim_inbound(session, message_id, LEASE_S) is not None
    assert await retry_inbound(session, late_q, "late", utcnow()) is False
    assert await renew_lease(session, late_q, LEASE_S) is False
    assert await status_of(session, message_id) == ("answering", 2)


async def test_the_ordering_check_reads_the_pending_index_not_the_backlog(
    session: AsyncSession,
) -> None:
    """A busy conversation (3,000 messages answered, 3 waiting) among 300 others with a
    few waiting each. The claim's "oldest row still to do in this conversation" is one probe
    of the index of pending rows: neither its history nor the whole queue is read."""
    [first] = await questions_of_one_student(session, "Câu đầu")
    await session.execute(
        text(
            """
            INSERT INTO messages (conversation_id, channel, direction, author, kind, text,
                                  status, created_at)
            SELECT m.conversation_id, 'web', 'in', 'user', 'text', 'câu ' || g,
                   CASE WHEN g % 1000 = 0 THEN 'received' ELSE 'answered' END::message_status,
                   now()
            FROM messages m, generate_series(1, 3000) g WHERE m.id = :id
            """
        ),
        {"id": first},
    )
    await session.execute(
        text(
            """
            WITH k AS (
                INSERT INTO contacts (channel, external_id)
                SELECT 'web', 'test-queue-bulk-' || g FROM generate_series(1, 300) g
                RETURNING id),
            c AS (INSERT INTO conversations (contact_id, channel)
                  SELECT id, 'web' FROM k RETURNING id)
            INSERT INTO messages (conversation_id, channel, direction, author, kind, text,
                                  status, created_at)
            SELECT c.id, 'web', 'in', 'user', 'text', 'câu ' || g, 'received', now()
            FROM c, generate_series(1, 3) g
            """
        )
    )
    await session.execute(text("ANALYZE messages"))
    plan = await claim_plan(session, LEASE_S, max_attempts=5)
    assert "ix_messages_pending_conversation on messages p" in plan, plan
    assert "Seq Scan on messages" not in plan, plan


async def test_past_the_cap_a_platform_question_waits_its_turn_after_one_notice_until_a_flood(
    session: AsyncSession,
) -> None:
    user = f"test-flood-{uuid.uuid4().hex[:8]}"

    async def ask(n: int, text_: str = "Học phí bao nhiêu?") -> Recorded:
        message = InboundMessage(
            channel="telegram",
            event_id=f"{user}-{n}",
            external_user_id=user,
            kind="text",
            text=text_,
        )
        return await record_inbound(session, message, max_pending=2, flood=4)

    asked = [await ask(n) for n in range(6)]
    assert [(r.held, r.noticed) for r in asked] == [
        (False, False),
        (False, False),
        (False, True),  # found 2 waiting: answered in its turn, the student told to wait
        (False, False),  # told once
        (True, False),  # past 4 waiting: a flood, held unanswered
        (True, False),
    ]
    rows = (
        await session.execute(
            text(
                "SELECT direction::text, author::text, status::text, text FROM messages "
                "WHERE conversation_id = :c ORDER BY id"
            ),
            {"c": asked[0].conversation_id},
        )
    ).all()
    notices = [r for r in rows if r.direction == "out"]
    assert [(n.author, n.status, n.text) for n in notices] == [
        ("bot", "queued", WAITING_NOTICE["vi"])
    ]
    assert [r.status for r in rows if r.direction == "in"] == ["received"] * 4 + ["skipped"] * 2
    # in English, the notice is in English
    other = f"test-flood-en-{uuid.uuid4().hex[:8]}"
    for n in range(3):
        message = InboundMessage(
            channel="telegram",
            event_id=f"{other}-{n}",
            external_user_id=other,
            kind="text",
            text="What is the tuition fee for computer science?",
        )
        last = await record_inbound(session, message, max_pending=2, flood=4)
    assert last.noticed
    english = await session.scalar(
        text("SELECT text FROM messages WHERE conversation_id = :c AND direction = 'out'"),
        {"c": last.conversation_id},
    )
    assert english == WAITING_NOTICE["en"]


async def test_a_question_finding_more_than_the_cap_waiting_and_no_notice_queues_one(
    session: AsyncSession,
) -> None:
    """Questions stored at one moment do not see each other: a burst can pass the cap without
    any of them finding exactly the cap waiting. The next one, finding more and no notice since
    the oldest waiting question, tells the student; the one after it does not again."""
    user = f"test-burst-{uuid.uuid4().hex[:8]}"

    async def ask(n: int, cap: int) -> Recorded:
        message = InboundMessage(
            channel="telegram",
            event_id=f"{user}-{n}",
            external_user_id=user,
            kind="text",
            text="Học phí bao nhiêu?",
        )
        return await record_inbound(session, message, max_pending=cap, flood=10)

    for n in range(3):  # as if stored together: none of them was told to look for 2 waiting
        assert not (await ask(n, cap=9)).noticed
    fourth, fifth = await ask(3, cap=2), await ask(4, cap=2)

    assert (fourth.held, fourth.noticed) == (False, True)
    assert (fifth.held, fifth.noticed) == (False, False)
