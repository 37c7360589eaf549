"""What the admin's browser tests share: the whole web app on 127.0.0.1 on committed
transactions (``live``, its rows removed after each test), one Chromium per test module
(``chromium``), a page in a fresh context per call (``new_page``, a screenshot of each page of
a failing test in test-artifacts/screenshots/), a signed-in staff page and the web chat.

A test module takes the fixtures by importing them (``chromium`` too: ``new_page`` stands on
it): pytest finds a fixture by its name in the module, so each module has its own browser.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.engine import make_sessionmaker
from bot.db.models import StaffRole
from bot.runtime import Runtime
from bot.web.app import create_app
from tests.admin._support import (
    ANSWER_TIMEOUT_MS,
    Staff,
    add_staff,
    chromium_browser,
    delete_rows_since,
    log_in,
    rows_since,
    screenshot_if_failed,
)

PHONE = {"width": 390, "height": 844}
ANSWERED = re.compile(r"\btier-(faq|documents|fallback)\b")  # the chat marks a finished reply
_numbers = itertools.count(1)

NewPage = Callable[..., Awaitable[Page]]


@dataclass(frozen=True)
class LiveApp:
    """The web app on a real port; ``sessionmaker`` commits for real."""

    base: str
    runtime: Runtime
    sessionmaker: async_sessionmaker[AsyncSession]
    http: aiohttp.ClientSession  # what the app sends to platforms with

    async def staff(self, role: StaffRole) -> Staff:
        email = f"browser-{role.value}{next(_numbers)}-{uuid.uuid4().hex[:6]}@shut.example.vn"
        return await add_staff(self.sessionmaker, email, role)


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Browser]:
    async with chromium_browser() as browser:
        yield browser


@pytest.fixture
async def live(
    settings: Settings, engine: AsyncEngine, parts: AnswererParts, demo_kb: object
) -> AsyncIterator[LiveApp]:
    marks = await rows_since(engine)
    sessionmaker = make_sessionmaker(engine)
    runtime = Runtime(settings, engine, sessionmaker, parts, Answerer(parts, sessionmaker))
    async with aiohttp.ClientSession() as platforms:
        server = TestServer(create_app(runtime, {}, platforms), host="127.0.0.1")
        await server.start_server()
        try:
            yield LiveApp(str(server.make_url("")).rstrip("/"), runtime, sessionmaker, platforms)
        finally:
            await server.close()
            await delete_rows_since(engine, marks)


@pytest.fixture
async def new_page(request: pytest.FixtureRequest, chromium: Browser) -> AsyncIterator[NewPage]:
    """``await new_page(**context_options)``: a page in a fresh context (its own cookies)."""
    opened: list[Page] = []

    async def make(**options: Any) -> Page:
        context = await chromium.new_context(locale="vi-VN", **options)
        opened.append(await context.new_page())
        return opened[-1]

    yield make
    for number, page in enumerate(opened, start=1):
        await screenshot_if_failed(request.node, page, request.config.rootpath, number)
        await page.context.close()


async def signed_in(live: LiveApp, new_page: NewPage, role: StaffRole, **options: Any) -> Page:
    page = await new_page(**options)
    await log_in(page, live.base, await live.staff(role))
    await expect(page.get_by_test_id("who")).to_be_visible()
    await page.goto(f"{live.base}/admin/faq")
    return page


async def open_chat(chat: Page, base: str) -> None:
    """The web chat page, once it has shown the visitor's history (a new visitor: the welcome):
    bubbles counted before that first rendering would miss the welcome and take it for a reply."""
    await chat.goto(f"{base}/")
    await expect(chat.locator("#log .msg").first).to_be_visible()


async def ask_in_chat(chat: Page, question: str) -> str:
    """Type a question in the web chat; the text of the bot's reply bubble once it arrived."""
    replies = chat.locator(".msg.bot")
    before = await replies.count()
    await chat.locator("#q").fill(question)
    await chat.locator("#send").click()
    await expect(replies).to_have_count(before + 1)
    reply = replies.nth(before)
    await expect(reply).to_have_class(ANSWERED, timeout=ANSWER_TIMEOUT_MS)
    await expect(reply.locator(".typing")).to_be_hidden()
    await expect(chat.locator("#send")).to_be_enabled()  # the page has the whole answer
    return await reply.locator(".body").text_content() or ""
