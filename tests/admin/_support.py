"""What the admin tests share.

A browser for the HTTP tests: its own cookie jar, real HTTP on 127.0.0.1, the CSRF token of its
login sent with every POST (``AdminBrowser``); the fixtures' types.

What the browser tests stand on: Debian's Chromium driven by Playwright, the whole web app on a
real 127.0.0.1 port, and a screenshot of the page when a test fails.

The app runs on *real* transactions, not the rolled-back connection of the other admin tests: a
browser sends requests side by side (a page and its history fetch, a stream and a poll), and
sessions joined into one connection cannot overlap. So what a test writes is committed, and
``rows_since`` / ``delete_rows_since`` take it away afterwards: every table with an integer
``id`` loses the rows added after the mark (staff sessions, variants, messages follow by cascade).

The screenshot needs the outcome of the test's call phase while its fixtures tear down: the hook
in tests/admin/conftest.py keeps each phase's report on the item.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestServer
from argon2 import PasswordHasher
from playwright.async_api import Browser, Page, Playwright, async_playwright, expect
from sqlalchemy import Integer, Table, delete, func, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from admin.i18n import Translator
from bot.core.citations import SOURCES_HEADING
from bot.db.models import Base, RateBucket, StaffRole, StaffUser

PASSWORD = "correct horse battery staple"
# /api/ask is off unless its token is set: the admin tests' app has this one (admin_settings).
ASK_TOKEN = "admin-tests-ask-token-5d2e"
ASK_HEADERS = {"Authorization": f"Bearer {ASK_TOKEN}"}
_CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')
_LOGIN_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')

FormBody = Mapping[str, str] | Sequence[tuple[str, str]] | aiohttp.FormData


@dataclass(frozen=True)
class Staff:
    id: int
    email: str
    role: StaffRole
    password: str = PASSWORD


class AdminBrowser:
    """One person's browser on the admin (no redirects followed unless asked)."""

    def __init__(self, server: TestServer) -> None:
        self.server = server
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.csrf = ""

    async def ask(self, question: str) -> dict[str, Any]:
        """``POST /api/ask``'s JSON, with ``said``: the answer without its sources block (an
        FAQ entry's answer is verbatim there; its source is cited below it)."""
        async with self.http.post(
            self.url("/api/ask"), json={"question": question}, headers=ASK_HEADERS
        ) as response:
            body: dict[str, Any] = await response.json()
        said = str(body.get("answer", ""))
        for heading in SOURCES_HEADING.values():
            said = said.split(f"\n\n{heading}", 1)[0]
        body["said"] = said
        return body

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))

    async def close(self) -> None:
        await self.http.close()

    async def get(self, path: str, **kwargs: Any) -> ClientResponse:
        kwargs.setdefault("allow_redirects", False)
        async with self.http.get(self.url(path), **kwargs) as response:
            await response.read()
            return response

    async def page(self, path: str) -> str:
        """The HTML of a page that must be there (200)."""
        response = await self.get(path)
        text = await response.text()
        assert response.status == 200, f"GET {path}: {response.status}\n{text[:2000]}"
        return text

    async def post(
        self,
        path: str,
        data: FormBody | None = None,
        *,
        csrf: str | None = None,
        headers: Mapping[str, str] | None = None,
        follow: bool = False,
    ) -> ClientResponse:
        """POST a form with this browser's CSRF token (``csrf=""`` sends none)."""
        token = self.csrf if csrf is None else csrf
        body: Any
        if isinstance(data, aiohttp.FormData):
            body = data
            if token:
                headers = {**(headers or {}), "X-CSRF-Token": token}
        else:
            pairs = list(data.items()) if isinstance(data, Mapping) else list(data or [])
            if token:
                pairs.append(("csrf_token", token))
            body = pairs
        async with self.http.post(
            self.url(path), data=body, headers=headers, allow_redirects=follow
        ) as response:
            await response.read()
            return response

    async def login(self, email: str, password: str = PASSWORD) -> ClientResponse:
        """Fill in the login form as a person would; on success, keep the session's CSRF token."""
        form = await self.page("/admin/login")
        found = _LOGIN_TOKEN.search(form)
        assert found, "the login form carries a CSRF token"
        response = await self.post(
            "/admin/login", {"email": email, "password": password}, csrf=found.group(1)
        )
        if response.status == 303:
            self.csrf = csrf_of(await self.page("/admin/try"))
        return response


def csrf_of(page: str) -> str:
    found = _CSRF_META.search(page)
    assert found, "a page names its CSRF token"
    assert found.group(1), "a signed-in page has a CSRF token"
    return found.group(1)


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


@asynccontextmanager
async def chromium_browser() -> AsyncIterator[Browser]:
    """Debian's Chromium driven by Playwright, closed (with Playwright) on the way out."""
    playwright = await async_playwright().start()
    try:
        browser = await launch_chromium(playwright)
        try:
            yield browser
        finally:
            await browser.close()
    finally:
        await playwright.stop()


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
    """Delete what the test added, children before parents, and the rate limits' buckets it
    drained (keyed by address, not id: a later test from 127.0.0.1 would start refused)."""
    async with engine.begin() as conn:
        for table in reversed(_id_tables()):
            await conn.execute(delete(table).where(table.c.id > marks.get(table.name, 0)))
        await conn.execute(delete(RateBucket))


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


MakeStaff = Callable[..., Awaitable[Staff]]
NewBrowser = Callable[[], AdminBrowser]
SignedIn = Callable[[StaffRole], Awaitable[AdminBrowser]]
