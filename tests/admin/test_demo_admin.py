"""`tuvan demo` makes a first admin account when there is none, and never a second one."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from admin.accounts import DEMO_ADMIN, authenticate, ensure_demo_admin
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.models import StaffRole, StaffUser
from bot.runtime import Runtime


async def test_the_demo_admin_is_made_once_with_a_password_that_signs_in(
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    settings: Settings,
) -> None:
    async with sessionmaker.begin() as session:  # inside the test's transaction: rolled back
        await session.execute(delete(StaffUser))
    runtime = Runtime(settings, engine, sessionmaker, parts, Answerer(parts, sessionmaker))

    account = await ensure_demo_admin(runtime)
    assert account is not None
    email, password = account
    assert email == DEMO_ADMIN
    assert len(password) >= 16
    async with sessionmaker.begin() as session:
        user = await session.scalar(select(StaffUser).where(StaffUser.email == email))
        assert user is not None
        assert user.role == StaffRole.admin
        assert password not in user.password_hash
        assert await authenticate(session, settings.admin, email, password, "127.0.0.1")

    assert await ensure_demo_admin(runtime) is None  # an account exists: nothing new
