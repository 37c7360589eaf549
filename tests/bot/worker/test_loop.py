"""The conversation store and the worker on a real PostgreSQL, with real commits.

The queues are about concurrency between transactions, so these tests commit for real (a
rollback-per-test connection would hide exactly what they check) and delete their own contacts
afterwards. Web-channel messages need no platform: the browser reads replies from the store.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict, replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.queue import ClaimedInbound, claim_next_inbound
from bot.conversations.store import record_inbound
from bot.core.clock import utcnow
from bot.core.messages import InboundMessage
from bot.db.models import Message
from bot.worker.loop import Worker

pytestmark = pytest.mark.usefixtures("demo_kb")


@pytest.fixture
async def db(engine: AsyncEngine) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    sm = async_sessionmaker(engine, expire_on_commit=False)
    yield sm
    async with sm.begin() as session:
        await session.execute(text("DELETE FROM contacts WHERE external_id LIKE 'test-%'"))


def worker_for(
    parts: AnswererParts, sm: async_sessionmaker[AsyncSession], **changes: object
) -> Worker:
    settings = parts.settings
    if changes:
        settings = settings.model_copy(
            update={"worker": settings.worker.model_copy(update=changes)}
        )
    parts = replace(parts, settings=settings)
    return Worker(settings, sm, Answerer(parts, sm), {}, http=None)  # type: ignore[arg-type]


def web_message(
    user: str, text_: str, *, kind: str = "text", event: str | None = None
) -> InboundMessage:
    return InboundMessage(
        channel="web",
        event_id=event or str(uuid.uuid4()),
        external_user_id=user,
        kind=kind,  # type: ignore[arg-type]
        text=text_,
    )


async def store(sm: async_sessionmaker[AsyncSession], *messages: InboundMessage) -> list[int]:
    ids = []
    async with sm.begin() as session:
        for m in messages:
            recorded = await record_inbound(session, m)
            assert recorded.message_id is not None
            ids.append(recorded.message_id)
    return ids


async def rows(sm: async_sessionmaker[AsyncSession], user: str) -> list[Message]:
    async with sm() as session:
        result = await session.scalars(
            select(Message)
            .where(
                Message.conversation_id.in_(
                    text(
                        "SELECT c.id FROM conversations c JOIN contacts k ON k.id = c.contact_id "
                        "WHERE k.external_id = :user"
                    ).bindparams(user=user)
                )
            )
            .order_by(Message.id)
        )
        return list(result.all())


def user_id() -> str:
    return f"test-{uuid.uuid4().hex[:10]}"


# -- the store --------------------------------------------------------------------------------


async def test_the_same_event_delivered_five_times_at_once_is_stored_once(
    db: async_sessionmaker[AsyncSession],
) -> None:
    user = user_id()
    message = web_message(user, "Học phí là bao nhiêu?", event="evt-1-" + user)

    async def deliver() -> int | None:
        async with db.begin() as session:
            return (await record_inbound(session, message)).message_id

    results = await asyncio.gather(*(deliver() for _ in range(5)))
    assert sum(r is not None for r in results) == 1
    stored = await rows(db, user)
    assert [(m.direction, m.status, m.text) for m in stored] == [
        ("in", "received", "Học phí là bao nhiêu?")
    ]


# -- answering --------------------------------------------------------------------------------


async def test_a_question_is_answered_once_and_its_reply_queued_then_sent(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = user_id()
    [question_id] = await store(
        db, web_message(user, "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?")
    )
    worker = worker_for(parts, db)
    await worker.drain()
    inbound, outbound = await rows(db, user)
    assert (inbound.status, inbound.attempts, inbound.tier) == ("answered", 1, "faq")
    assert inbound.done_at is not None
    assert outbound.reply_to_id == question_id
    assert (outbound.direction, outbound.author, outbound.status) == ("out", "bot", "sent")
    assert outbound.tier == "faq"
    assert "SHUT" in outbound.text
    assert outbound.details["timings_ms"]["total"] > 0
    # why, as data the admin explains in staff's words (admin.explanations)
    [step] = outbound.details["why"]["faq"][:1]
    assert step["result"] in ("accepted", "verbatim")
    assert step["faq_id"] > 0
    await worker.drain()  # nothing left: no second answer
    assert len(await rows(db, user)) == 2


async def test_messages_of_one_conversation_are_answered_in_order(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = user_id()
    first, _second = await store(
        db,
        web_message(user, "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"),
        web_message(user, "Học phí bao nhiêu?"),
    )
    worker = worker_for(parts, db)
    claimed = await claim_inbound(worker)
    assert claimed is not None
    assert claimed["id"] == first
    # While the first is being answered, the second of the same conversation waits.
    assert await claim_inbound(worker) is None
    await worker.drain()  # the lease of the first is still running: nothing else moves
    assert [m.status for m in await rows(db, user)][:2] == ["answering", "received"]


async def claim_inbound(worker: Worker) -> dict[str, Any] | None:
    """What the worker's own step claims first: the next question, as a mapping."""
    async with worker.sessionmaker.begin() as session:
        w = worker.settings.worker
        claimed = await claim_next_inbound(session, w.lease_s, max_attempts=w.max_attempts)
    return None if claimed is None else asdict(claimed)


async def test_a_claim_whose_lease_ran_out_is_answered_by_another_worker_once(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = user_id()
    [question_id] = await store(
        db, web_message(user, "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?")
    )
    dead = worker_for(parts, db, lease_s=0.2)
    claimed = await claim_inbound(dead)  # then it "dies": never stores
    assert claimed is not None
    await asyncio.sleep(0.3)
    alive = worker_for(parts, db)
    await alive.drain()
    # The dead worker wakes up late and tries to store its answer: dropped.
    late = await dead.store_answer(ClaimedInbound(**claimed), "late answer", "faq", [], {}, None)
    assert late is False
    messages = await rows(db, user)
    assert [(m.direction, m.status) for m in messages] == [("in", "answered"), ("out", "sent")]
    assert messages[0].attempts == 2
    assert messages[1].reply_to_id == question_id


async def test_two_workers_answer_every_message_exactly_once(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    users = [user_id() for _ in range(4)]
    questions = [
        "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?",
        "Học phí bao nhiêu?",
        "Ký túc xá ở đâu?",
    ]
    await store(db, *(web_message(u, q) for u in users for q in questions))
    a, b = worker_for(parts, db), worker_for(parts, db)
    await asyncio.gather(a.drain(), b.drain())
    for u in users:
        messages = await rows(db, u)
        inbound = [m for m in messages if m.direction == "in"]
        outbound = [m for m in messages if m.direction == "out"]
        assert [m.status for m in inbound] == ["answered"] * 3
        assert sorted(m.reply_to_id for m in outbound) == [m.id for m in inbound]
        # replies in the order of the questions
        assert [m.reply_to_id for m in outbound] == [m.id for m in inbound]


async def test_a_paused_conversation_is_not_answered(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = user_id()
    await store(db, web_message(user, "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"))
    async with db.begin() as session:
        await session.execute(
            text(
                "UPDATE conversations SET paused_until = :until WHERE contact_id = "
                "(SELECT id FROM contacts WHERE external_id = :user)"
            ),
            {"until": utcnow() + timedelta(minutes=30), "user": user},
        )
    await worker_for(parts, db).drain()
    [inbound] = await rows(db, user)
    assert (inbound.status, inbound.error) == ("skipped", "staff answering")


async def test_greetings_and_media_get_fixed_replies(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = user_id()
    await store(
        db,
        web_message(user, "/start", kind="command"),
        web_message(user, "", kind="unsupported"),
        web_message(user, "", kind="event"),
    )
    await worker_for(parts, db).drain()
    messages = await rows(db, user)
    assert [(m.direction, m.kind, m.status) for m in messages] == [
        ("in", "command", "answered"),
        ("in", "unsupported", "answered"),
        ("in", "event", "skipped"),
        ("out", "text", "sent"),
        ("out", "text", "sent"),
    ]
    assert "chatbot" in messages[3].text
    assert "chỉ đọc được tin nhắn chữ" in messages[4].text


async def test_a_follow_up_is_answered_as_a_standalone_question(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = user_id()
    worker = worker_for(parts, db)
    await store(db, web_message(user, "Học phí ngành Khoa học Máy tính năm 2026 là bao nhiêu?"))
    await worker.drain()
    await store(db, web_message(user, "còn ngành Công nghệ Thông tin thì sao?"))
    await worker.drain()
    inbound = [m for m in await rows(db, user) if m.direction == "in"]
    assert inbound[1].question == "Học phí ngành Công nghệ Thông tin năm 2026 là bao nhiêu?"
    assert inbound[1].status == "answered"


async def test_a_failing_answer_is_retried_then_marked_failed(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession]
) -> None:
    user = user_id()
    await store(db, web_message(user, "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?"))
    worker = worker_for(parts, db, max_attempts=2, backoff_base_s=0.01, backoff_max_s=0.01)

    async def broken(question: str) -> object:
        raise RuntimeError("model crashed")

    worker.answerer.answer = broken  # type: ignore[method-assign]
    await worker.drain()
    await asyncio.sleep(0.05)
    await worker.drain()
    [inbound] = await rows(db, user)
    assert (inbound.status, inbound.attempts) == ("failed", 2)
    assert "model crashed" in (inbound.error or "")
    async with db() as session:
        assert (
            await session.scalar(
                select(func.count()).select_from(Message).where(Message.reply_to_id == inbound.id)
            )
            == 0
        )


async def test_a_running_worker_wakes_on_notify_without_polling(
    parts: AnswererParts, db: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    worker = worker_for(parts, db, poll_s=60.0)  # polling alone would take a minute
    worker._database_url = engine.url.render_as_string(hide_password=False)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await asyncio.sleep(1.0)  # listening
        user = user_id()
        await store(
            db, web_message(user, "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?")
        )
        for _ in range(100):
            if [m.status for m in await rows(db, user)] == ["answered", "sent"]:
                break
            await asyncio.sleep(0.1)
        assert [m.status for m in await rows(db, user)] == ["answered", "sent"]
    finally:
        stop.set()
        await asyncio.wait_for(running, 10)
