"""Fixtures of the admin tests: the whole web app (bot.web.app with /admin mounted) over real HTTP
on 127.0.0.1 against the test's rolled-back transaction, staff accounts, signed-in browsers.

For a page's tests::

    async def test_something(editor: AdminBrowser) -> None:
        page = await editor.page("/admin/faq")
        response = await editor.post("/admin/faq/new", {"question": ..., "answer": ...})

``viewer``, ``editor`` and ``admin`` are browsers signed in with that role; ``browser()`` makes
a signed-out one; ``make_staff(role)`` creates an account (password ``_support.PASSWORD``).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Generator

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from argon2 import PasswordHasher
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.models import StaffRole, StaffUser
from bot.runtime import Runtime
from bot.web.app import create_app
from tests.admin._support import (
    ASK_TOKEN,
    PASSWORD,
    PHASES,
    AdminBrowser,
    MakeStaff,
    NewBrowser,
    SignedIn,
    Staff,
)

_HASH = PasswordHasher().hash(PASSWORD)  # once: argon2 is slow on purpose
_numbers = itertools.count(1)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the item, for fixtures that look at the outcome."""
    report = yield
    item.stash.setdefault(PHASES, {})[report.when] = report
    return report


@pytest.fixture
def admin_settings(settings: Settings) -> Settings:
    """The session settings with /api/ask turned on (``ASK_TOKEN``); a test may replace it
    (e.g. a lower login limit)."""
    web_section = settings.web.model_copy(update={"ask_token": SecretStr(ASK_TOKEN)})
    return settings.model_copy(update={"web": web_section})


@pytest.fixture
async def admin_server(
    admin_settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
) -> AsyncIterator[TestServer]:
    runtime = Runtime(admin_settings, engine, sessionmaker, parts, answerer)
    async with aiohttp.ClientSession() as platforms:
        server = TestServer(create_app(runtime, {}, platforms), host="127.0.0.1")
        await server.start_server()
        try:
            yield server
        finally:
            await server.close()


@pytest.fixture
async def make_staff(sessionmaker: async_sessionmaker[AsyncSession]) -> MakeStaff:
    async def make(role: StaffRole, *, email: str | None = None, active: bool = True) -> Staff:
        address = (email or f"{role.value}{next(_numbers)}@shut.example.vn").lower()
        async with sessionmaker.begin() as session:
            user = StaffUser(email=address, password_hash=_HASH, role=role, active=active)
            session.add(user)
            await session.flush()
            return Staff(user.id, address, role)

    return make


@pytest.fixture
async def browser(admin_server: TestServer) -> AsyncIterator[NewBrowser]:
    opened: list[AdminBrowser] = []

    def new() -> AdminBrowser:
        opened.append(AdminBrowser(admin_server))
        return opened[-1]

    try:
        yield new
    finally:
        for b in opened:
            await b.close()


@pytest.fixture
def signed_in(browser: NewBrowser, make_staff: MakeStaff) -> SignedIn:
    async def sign_in(role: StaffRole) -> AdminBrowser:
        staff = await make_staff(role)
        b = browser()
        response = await b.login(staff.email)
        assert response.status == 303, f"login as {role.value}: {response.status}"
        return b

    return sign_in


@pytest.fixture
async def viewer(signed_in: SignedIn) -> AdminBrowser:
    return await signed_in(StaffRole.viewer)


@pytest.fixture
async def editor(signed_in: SignedIn) -> AdminBrowser:
    return await signed_in(StaffRole.editor)


@pytest.fixture
async def admin(signed_in: SignedIn) -> AdminBrowser:
    return await signed_in(StaffRole.admin)
