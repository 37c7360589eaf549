"""What the admin's browser tests stand on: Debian's Chromium driven by Playwright, the whole web
app on a real 127.0.0.1 port, and a screenshot of the page when a test fails.

The app runs on *real* transactions, not the rolled-back connection of the other admin tests: a
browser sends requests side by side (a page and its history fetch, a stream and a poll), and
sessions joined into one connection cannot overlap. So what a test writes is committed, and
``rows_since`` / ``delete_rows_since`` take it away afterwards: every table with an integer
``id`` loses the rows added after the mark (staff sessions, variants, messages follow by cascade).

The screenshot needs the outcome of the test's call phase while its fixtures tear down: the hook
below keeps each phase's report on the item; tests/admin/conftest.py imports it so that pytest
registers it (a hook must live in a conftest or a plugin).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from playwright.async_api import Browser, Page, Playwright, expect
from sqlalchemy import Integer, Table, delete, func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from admin.i18n import Translator
from bot.models import Base, StaffRole, StaffUser
from tests.admin.adminweb import PASSWORD, Staff

CHROMIUM = "/usr/bin/chromium"  # Debian's; Playwright's own download cannot be reached here
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",  # root in a container: no user namespace for the sandbox
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path("test-artifacts") / "screenshots"
# How long an expectation waits for the page. Generous on purpose: it costs nothing when the
# page is quick, and a first answer (embedding, hybrid search) on 2 cores shared with other jobs
# has been seen to take longer than 15 s. A passing run waits a few seconds in all.
TIMEOUT_MS = 30_000
ANSWER_TIMEOUT_MS = 60_000  # for an answer in the web chat, and a staff reply polled for

PHASES = pytest.StashKey[dict[str, pytest.TestReport]]()
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_HASH = PasswordHasher().hash(PASSWORD)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keep each phase's report on the item, for fixtures that look at the outcome."""
    report = yield
    item.stash.setdefault(PHASES, {})[report.when] = report
    return report


def call_failed(item: pytest.Item) -> bool:
    report = item.stash.get(PHASES, {}).get("call")
    return report is not None and report.failed


def screenshot_path(root: Path, nodeid: str, number: int = 1) -> Path:
    """``test-artifacts/screenshots/<test>.png`` under the rootdir, named after the test id;
    a test's second page is ``<test>-2.png`` and so on."""
    name = _UNSAFE.sub("_", nodeid.split("::", 1)[-1]).strip("_") or "test"
    suffix = f"-{number}" if number > 1 else ""
    return root / SCREENSHOTS / f"{name}{suffix}.png"


async def launch_chromium(playwright: Playwright) -> Browser:
    expect.set_options(timeout=TIMEOUT_MS)
    return await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


async def screenshot_if_failed(
    item: pytest.Item, page: Page, root: Path, number: int = 1
) -> Path | None:
    if not call_failed(item) or page.is_closed():
        return None
    path = screenshot_path(root, item.nodeid, number)
    path.parent.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(path), full_page=True)
    return path


# -- committed rows, and taking them away ---------------------------------------------------------


def _id_tables() -> list[Table]:
    """Tables keyed by an integer ``id``, parents first (BigInteger is an Integer too)."""
    found = []
    for table in Base.metadata.sorted_tables:
        column = table.c.get("id")
        if column is not None and column.primary_key and isinstance(column.type, Integer):
            found.append(table)
    return found


async def rows_since(engine: AsyncEngine) -> dict[str, int]:
    """The highest id of each table now: rows above it are the test's."""
    marks = {}
    async with engine.connect() as conn:
        for table in _id_tables():
            highest = await conn.scalar(select(func.coalesce(func.max(table.c.id), 0)))
            marks[table.name] = int(highest or 0)
    return marks


async def delete_rows_since(engine: AsyncEngine, marks: dict[str, int]) -> None:
    """Delete what the test added, children before parents."""
    async with engine.begin() as conn:
        for table in reversed(_id_tables()):
            await conn.execute(delete(table).where(table.c.id > marks.get(table.name, 0)))


async def add_staff(
    sessionmaker: async_sessionmaker[AsyncSession], email: str, role: StaffRole
) -> Staff:
    """An account committed for real (the browser's requests run on their own transactions)."""
    async with sessionmaker.begin() as session:
        user = StaffUser(email=email, password_hash=_HASH, role=role, active=True)
        session.add(user)
        await session.flush()
        return Staff(user.id, email, role)


# -- what a person does in the admin --------------------------------------------------------------


def words(key: str, **params: str) -> str:
    """What the admin shows for ``key`` in its default language (Vietnamese)."""
    return Translator("vi")(key, **params)


async def log_in(page: Page, base: str, staff: Staff, password: str | None = None) -> None:
    """Fill in the login form; on the right password the dashboard opens."""
    await page.goto(f"{base}/admin/login")
    await page.get_by_label(words("login.email"), exact=True).fill(staff.email)
    await page.get_by_label(words("login.password"), exact=True).fill(password or staff.password)
    await page.get_by_test_id("login-submit").click()
