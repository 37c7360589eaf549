"""An FAQ answer in the chat page, in a real browser (Debian's headless Chromium, driven by
Playwright): its source shown as the document's title linked to its address (the entry names
the file "tong-quan.md", never shown), and a vote under it thanked in the conversation's
language, by one note that a vote cast again only rewrites. The whole web app on 127.0.0.1 over
the session's PostgreSQL on committed transactions (removed after each test)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.core.votes import THANKS
from bot.db.engine import make_sessionmaker
from bot.runtime import Runtime
from bot.web.app import create_app
from tests.admin._support import ANSWER_TIMEOUT_MS, chromium_browser, delete_rows_since, rows_since
from tests.bot.web._support import FAQ_QUESTION

pytestmark = pytest.mark.usefixtures("demo_kb")

ENGLISH_FAQ_QUESTION = "What English level do international students need?"  # shut-faq29
TITLE = "Tổng quan về Trường Đại học Công nghệ Sông Hồng"  # the document "tong-quan.md"
URL = "https://tuyensinh.shut.example.vn/tong-quan"


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Browser]:
    async with chromium_browser() as browser:
        yield browser


@pytest.fixture
async def chat_page(
    settings: Settings, engine: AsyncEngine, parts: AnswererParts, chromium: Browser
) -> AsyncIterator[Callable[[], Awaitable[Page]]]:
    """``await chat_page()``: the chat page of the web app on a real port, in a new browser
    context (a new visitor), Vietnamese first."""
    marks = await rows_since(engine)
    sessionmaker = make_sessionmaker(engine)
    runtime = Runtime(settings, engine, sessionmaker, parts, Answerer(parts, sessionmaker))
    pages: list[Page] = []
    async with aiohttp.ClientSession() as platforms:
        server = TestServer(create_app(runtime, {}, platforms), host="127.0.0.1")
        await server.start_server()

        async def open_page() -> Page:
            context = await chromium.new_context(locale="vi-VN")
            pages.append(await context.new_page())
            await pages[-1].goto(str(server.make_url("/")))
            return pages[-1]

        try:
            yield open_page
        finally:
            for page in pages:
                await page.context.close()
            await server.close()
            await delete_rows_since(engine, marks)


async def ask(page: Page, question: str) -> None:
    await page.locator("#q").fill(question)
    await page.locator("#send").click()
    answer = page.locator("#log .msg.bot").last
    await expect(answer).to_have_class(re.compile(r"\btier-faq\b"), timeout=ANSWER_TIMEOUT_MS)


async def test_an_faq_answer_shows_its_documents_title_linked_not_a_file_name(
    chat_page: Callable[[], Awaitable[Page]],
) -> None:
    page = await chat_page()
    await ask(page, FAQ_QUESTION)
    answer = page.locator("#log .msg.bot").last
    link = answer.locator(".links a")
    await expect(link).to_have_text(TITLE)
    await expect(link).to_have_attribute("href", URL)
    await expect(answer.locator(".body")).not_to_contain_text("Nguồn:")  # shown once, as a link
    await expect(answer).not_to_contain_text("tong-quan.md")


async def test_a_vote_is_thanked_once_in_vietnamese(
    chat_page: Callable[[], Awaitable[Page]],
) -> None:
    page = await chat_page()
    await ask(page, FAQ_QUESTION)
    votes = page.locator("#log .msg.bot").last.locator(".votes")
    await votes.locator('button[data-value="1"]').click()
    thanks = votes.locator(".thanks")
    await expect(thanks).to_have_text(THANKS["vi"])
    await expect(thanks).to_have_attribute("role", "status")
    await expect(votes.locator('button[data-value="1"]')).to_have_attribute("aria-pressed", "true")
    # A change of mind: the choice moves, the note stays one note.
    await votes.locator('button[data-value="-1"]').click()
    await expect(votes.locator('button[data-value="-1"]')).to_have_attribute("aria-pressed", "true")
    await expect(votes.locator(".thanks")).to_have_count(1)
    await expect(thanks).to_have_text(THANKS["vi"])


async def test_a_vote_on_an_english_answer_is_thanked_in_english(
    chat_page: Callable[[], Awaitable[Page]],
) -> None:
    page = await chat_page()
    await ask(page, ENGLISH_FAQ_QUESTION)
    votes = page.locator("#log .msg.bot").last.locator(".votes")
    await votes.locator('button[data-value="1"]').click()
    await expect(votes.locator(".thanks")).to_have_text(THANKS["en"])
