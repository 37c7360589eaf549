"""The login limit under parallel guesses, over real HTTP with real commits: every try runs in
its own transaction on its own connection, as in production (the other admin tests share one
rolled-back connection, where advisory locks could not race)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from argon2 import PasswordHasher
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.models import LoginAttempt, StaffRole, StaffUser
from bot.runtime import Runtime
from bot.web.app import create_app
from tests.admin._support import PASSWORD, AdminBrowser

GUESSER = {"X-Forwarded-For": "198.51.100.7"}
COLLEAGUE = {"X-Forwarded-For": "203.0.113.10"}


@pytest.fixture
async def committing(engine: AsyncEngine) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """Sessions that commit for real; the test's staff and attempts are deleted after."""
    sm = async_sessionmaker(engine, expire_on_commit=False)
    yield sm
    async with sm.begin() as session:
        await session.execute(delete(StaffUser).where(StaffUser.email.like("race-%")))
        await session.execute(delete(LoginAttempt).where(LoginAttempt.email.like("race-%")))


async def start(
    settings: Settings,
    engine: AsyncEngine,
    sm: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
    **admin: object,
) -> tuple[TestServer, aiohttp.ClientSession]:
    settings = settings.model_copy(
        update={"admin": settings.admin.model_copy(update={"trust_proxy": True, **admin})}
    )
    platforms = aiohttp.ClientSession()
    server = TestServer(create_app(Runtime(settings, engine, sm, parts, answerer), {}, platforms))
    await server.start_server()
    return server, platforms


async def new_staff(sm: async_sessionmaker[AsyncSession]) -> str:
    email = f"race-{uuid.uuid4().hex[:8]}@shut.example.vn"
    async with sm.begin() as session:
        session.add(
            StaffUser(
                email=email, password_hash=PasswordHasher().hash(PASSWORD), role=StaffRole.viewer
            )
        )
    return email


async def login(b: AdminBrowser, email: str, password: str, headers: dict[str, str]) -> int:
    form = await b.page("/admin/login")
    token = form.split('name="csrf_token" value="')[1].split('"')[0]
    response = await b.post(
        "/admin/login", {"email": email, "password": password}, csrf=token, headers=headers
    )
    return response.status


async def failures(sm: async_sessionmaker[AsyncSession], email: str) -> int:
    async with sm() as session:
        found = await session.scalar(
            select(func.count()).where(
                LoginAttempt.email == email, LoginAttempt.succeeded.is_(False)
            )
        )
    return int(found or 0)


async def test_fifty_parallel_wrong_passwords_get_only_the_limits_guesses(
    settings: Settings,
    engine: AsyncEngine,
    committing: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> None:
    server, platforms = await start(settings, engine, committing, parts, answerer)
    email = await new_staff(committing)
    browsers = [AdminBrowser(server) for _ in range(50)]
    try:
        statuses = await asyncio.gather(
            *(login(b, email, f"wrong password {n}", GUESSER) for n, b in enumerate(browsers))
        )
        limit = settings.admin.login_failures_per_email
        # Every verified guess is a recorded attempt: no more than the limit were checked.
        assert await failures(committing, email) == limit
        assert Counter(statuses) == {401: limit, 429: 50 - limit}
        # The account is not locked for a colleague at another address.
        assert await login(browsers[0], email, PASSWORD, COLLEAGUE) == 303
        assert await login(browsers[1], email, PASSWORD, GUESSER) == 429
    finally:
        for b in browsers:
            await b.close()
        await server.close()
        await platforms.close()


async def test_guessing_addresses_and_networks_are_throttled_and_the_owner_still_signs_in(
    settings: Settings,
    engine: AsyncEngine,
    committing: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> None:
    server, platforms = await start(
        settings,
        engine,
        committing,
        parts,
        answerer,
        login_failures_per_email_total=3,
        login_failures_per_network=6,
    )
    email = await new_staff(committing)
    b = AdminBrowser(server)
    try:
        guessers = [{"X-Forwarded-For": f"198.51.100.{n + 10}"} for n in range(12)]
        statuses = [await login(b, email, "wrong password", g) for g in guessers]
        assert statuses == [401] * 6 + [429] * 6  # the guessing network is throttled
        assert await login(b, email, PASSWORD, guessers[0]) == 429  # a guessing address too
        # a new address that fails for the e-mail past its total bound is stopped after one
        elsewhere = {"X-Forwarded-For": "192.0.2.50"}
        assert await login(b, email, "wrong password", elsewhere) == 401
        assert await login(b, email, PASSWORD, elsewhere) == 429
        # the account is not locked for everyone: its owner, from an address that has not
        # failed, signs in
        assert await login(b, email, PASSWORD, COLLEAGUE) == 303
    finally:
        await b.close()
        await server.close()
        await platforms.close()
