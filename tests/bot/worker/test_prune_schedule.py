"""The worker's prune schedule (bot.worker.prune_schedule) on a real PostgreSQL, inside the
test's rolled-back transaction."""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.conversations.retention import prune_lock
from bot.conversations.store import record_inbound
from bot.core.messages import InboundMessage
from bot.core.settings import RetentionSettings
from bot.worker.prune_schedule import run_prune_schedule


async def year_old_message(session: AsyncSession) -> int:
    recorded = await record_inbound(
        session,
        InboundMessage(
            channel="web",
            event_id=str(uuid.uuid4()),
            external_user_id=f"test-schedule-{uuid.uuid4().hex[:8]}",
            kind="text",
            text="Ký túc xá còn chỗ không?",
        ),
    )
    assert recorded.message_id is not None
    await session.execute(
        text(
            "UPDATE messages SET status = 'answered', created_at = now() - interval '400 days' "
            "WHERE id = :id"
        ),
        {"id": recorded.message_id},
    )
    await session.commit()
    return recorded.message_id


async def still_there(session: AsyncSession, message_id: int) -> bool:
    found = await session.scalar(
        text("SELECT count(*) FROM messages WHERE id = :id"), {"id": message_id}
    )
    return bool(found == 1)


async def test_the_worker_prunes_on_schedule_until_stopped(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    message_id = await year_old_message(session)
    stop = asyncio.Event()
    # Every 0.36 s, the first at once; stopped before the second.
    policy = RetentionSettings(prune_every_hours=0.0001)
    task = asyncio.create_task(
        run_prune_schedule(policy, sessionmaker, engine, stop, first_delay_s=0)
    )
    await asyncio.sleep(0.25)
    stop.set()
    assert await asyncio.wait_for(task, 5) == 1
    assert not await still_there(session, message_id)


async def test_a_worker_skips_its_turn_while_another_prunes(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    message_id = await year_old_message(session)
    stop = asyncio.Event()
    policy = RetentionSettings(prune_every_hours=0.00002)  # every 72 ms
    async with prune_lock(engine) as held:
        assert held
        task = asyncio.create_task(
            run_prune_schedule(policy, sessionmaker, engine, stop, first_delay_s=0)
        )
        await asyncio.sleep(0.2)  # two or three turns, each finding the lock taken
        stop.set()
        assert await asyncio.wait_for(task, 5) == 0
    assert await still_there(session, message_id)


async def test_an_interval_of_zero_disables_the_schedule(
    sessionmaker: async_sessionmaker[AsyncSession], engine: AsyncEngine
) -> None:
    policy = RetentionSettings(prune_every_hours=0)
    never_stopped = asyncio.Event()
    ran = await asyncio.wait_for(run_prune_schedule(policy, sessionmaker, engine, never_stopped), 1)
    assert ran == 0
