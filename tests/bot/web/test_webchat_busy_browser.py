"""The chat page under its own limits, in a real browser (Debian's headless Chromium, driven by
Playwright): a student typing quickly, as students do, is answered at the default limits without
a 429; a 429 or 503 is shown as "busy", the question stays and goes again after ``Retry-After``
with the same message id, and it is answered once. The whole web app on 127.0.0.1 over the
session's PostgreSQL on committed transactions (removed after each test).

A 503 whose question the server had recorded and answered (a proxy giving up on the answer) is
the one thing tuvan cannot be made to do by itself: the browser's own network layer (Playwright's
``route``) passes the request to tuvan and hands the page a 503 instead of the answer.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, Page, Request, Response, Route, expect
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.engine import make_sessionmaker
from bot.db.models import (
    Author,
    Contact,
    Conversation,
    Direction,
    Message,
    MessageStatus,
    RateBucket,
)
from bot.runtime import Runtime
from bot.web.app import create_app
from bot.web.rate_limits import RateLimit, take_token
from tests.admin._support import ANSWER_TIMEOUT_MS, chromium_browser, delete_rows_since, rows_since
from tests.bot.web._webchat import with_limits

pytestmark = pytest.mark.usefixtures("demo_kb")

# A finished reply carries its tier (live and from the history alike).
ANSWERED = "#log .msg.bot[data-tier]"
BUSY_VI = (
    "Trợ lý đang bận trả lời nhiều câu hỏi. Câu hỏi của bạn vẫn được giữ và sẽ tự gửi lại sau ít "
    "giây."
)
BUSY_EN = re.compile("The assistant is busy")
# How students type: an opener, then short questions, many without diacritics.
OPENER_AND_THREE = (
    "ad oi",
    "Học phí ngành Công nghệ thông tin bao nhiêu?",
    "Ký túc xá giá bao nhiêu một tháng?",
    "Trường có mấy cơ sở?",
)
SEVEN_QUICK = (
    "ad oi",
    "cho e hoi",
    "hp cntt bn",
    "ktx bn 1 thang",
    "co hoc bong k",
    "diem chuan nam ngoai",
    "ma truong la gi",
)


@dataclass
class Traffic:
    """The page's ``POST /api/chat`` requests: the message ids sent, the statuses received."""

    message_ids: list[str] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)  # time.monotonic() of each send

    def watch(self, page: Page) -> None:
        page.on("request", self._request)
        page.on("response", self._response)

    def _request(self, request: Request) -> None:
        if request.method == "POST" and request.url.endswith("/api/chat"):
            self.message_ids.append(json.loads(request.post_data or "{}")["message_id"])
            self.sent_at.append(time.monotonic())

    def _response(self, response: Response) -> None:
        if response.request.method == "POST" and response.url.endswith("/api/chat"):
            self.statuses.append(response.status)


@dataclass(frozen=True)
class Chat:
    base: str
    sessionmaker: async_sessionmaker[AsyncSession]


StartChat = Callable[..., Awaitable[Chat]]


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Browser]:
    async with chromium_browser() as browser:
        yield browser


@pytest.fixture
async def start_chat(
    settings: Settings, engine: AsyncEngine, parts: AnswererParts
) -> AsyncIterator[StartChat]:
    """``await start_chat(**limits)``: the web app on a real port, with the default limits
    changed as given; every bucket starts full (earlier tests share the address 127.0.0.1)."""
    marks = await rows_since(engine)
    sessionmaker = make_sessionmaker(engine)
    servers: list[TestServer] = []

    async def clear_buckets() -> None:
        async with sessionmaker.begin() as session:
            await session.execute(delete(RateBucket))

    async with aiohttp.ClientSession() as platforms:

        async def start(**limits: Any) -> Chat:
            await clear_buckets()
            runtime = Runtime(
                with_limits(settings, **limits),
                engine,
                sessionmaker,
                parts,
                Answerer(parts, sessionmaker),
            )
            server = TestServer(create_app(runtime, {}, platforms), host="127.0.0.1")
            await server.start_server()
            servers.append(server)
            return Chat(str(server.make_url("")).rstrip("/"), sessionmaker)

        try:
            yield start
        finally:
            for server in servers:
                await server.close()
            await delete_rows_since(engine, marks)
            await clear_buckets()


@pytest.fixture
async def page(chromium: Browser) -> AsyncIterator[Page]:
    context = await chromium.new_context(locale="vi-VN")
    try:
        yield await context.new_page()
    finally:
        await context.close()


async def open_chat(page: Page, chat: Chat, *, visitor: str | None = None) -> None:
    """The chat page, once it has shown the welcome; ``visitor``: the id the page keeps."""
    if visitor is not None:
        await page.add_init_script(
            f"localStorage.setItem('tuvan.visitor', {json.dumps(visitor)});"
            "localStorage.setItem('tuvan.visitor.used', String(Date.now()));"
        )
    await page.goto(f"{chat.base}/")
    await expect(page.locator("#log .msg.bot").first).to_be_visible()


async def type_question(page: Page, text: str) -> None:
    """Type and press Enter, whether or not an earlier question is still on its way."""
    await page.locator("#q").fill(text)
    await page.locator("#q").press("Enter")


async def questions_and_replies(
    sessionmaker: async_sessionmaker[AsyncSession], visitor: str
) -> list[tuple[Message, int]]:
    """The visitor's questions in order, each with the number of bot replies to it."""
    async with sessionmaker() as session:
        questions = (
            await session.scalars(
                select(Message)
                .join(Conversation, Conversation.id == Message.conversation_id)
                .join(Contact, Contact.id == Conversation.contact_id)
                .where(Contact.channel == "web", Contact.external_id == visitor)
                .where(Message.direction == Direction.inbound)
                .order_by(Message.id)
            )
        ).all()
        found = []
        for question in questions:
            replies = await session.scalars(
                select(Message.id).where(
                    Message.reply_to_id == question.id, Message.author == Author.bot
                )
            )
            found.append((question, len(replies.all())))
        return found


async def visitor_of(page: Page) -> str:
    return str(await page.evaluate("localStorage.getItem('tuvan.visitor')"))


@pytest.mark.parametrize(
    ("questions", "gap_s"),
    [(OPENER_AND_THREE, 2.5), (SEVEN_QUICK, 1.2)],
    ids=["an-opener-and-three-questions", "seven-quick-messages"],
)
async def test_a_student_typing_quickly_is_answered_every_time_without_a_429(
    start_chat: StartChat, page: Page, questions: tuple[str, ...], gap_s: float
) -> None:
    chat = await start_chat()  # the default limits
    traffic = Traffic()
    traffic.watch(page)
    await open_chat(page, chat)
    started = time.monotonic()
    for n, text in enumerate(questions):
        if n:
            await asyncio.sleep(gap_s)  # typing the next one; the last answer may not be in yet
        await type_question(page, text)
    assert time.monotonic() - started <= 10.0
    await expect(page.locator("#log .msg.user")).to_have_text(list(questions))
    await expect(page.locator(ANSWERED)).to_have_count(len(questions), timeout=ANSWER_TIMEOUT_MS)
    await expect(page.locator("#log .msg.waiting, #log .msg.error")).to_have_count(0)
    assert traffic.statuses == [200] * len(questions)
    stored = await questions_and_replies(chat.sessionmaker, await visitor_of(page))
    assert [q.text for q, _ in stored] == list(questions)
    assert [(q.status, replies) for q, replies in stored] == [(MessageStatus.answered, 1)] * len(
        questions
    )


async def test_a_429_is_shown_as_busy_and_the_question_is_answered_once_after_the_retry(
    start_chat: StartChat, page: Page
) -> None:
    # One question at a time, a token every 5 s; the visitor's other tab just took the token.
    limit = RateLimit(per_minute=12.0, burst=1)
    chat = await start_chat(chat_visitor_per_minute=limit.per_minute, chat_visitor_burst=1)
    visitor = f"busy-{uuid.uuid4().hex}"
    traffic = Traffic()
    traffic.watch(page)
    await open_chat(page, chat, visitor=visitor)
    async with chat.sessionmaker.begin() as session:
        assert await take_token(session, f"chat-visitor:{visitor}", limit) is None
    await type_question(page, OPENER_AND_THREE[1])
    reply = page.locator("#log .msg.bot").last
    await expect(reply.locator(".body")).to_have_text(BUSY_VI)
    await expect(reply).to_have_class(re.compile(r"\bwaiting\b"))
    await expect(page.locator("#log .msg.user")).to_have_text([OPENER_AND_THREE[1]])  # kept
    await expect(page.locator(ANSWERED)).to_have_count(1, timeout=ANSWER_TIMEOUT_MS)
    await expect(page.locator("#log .msg.waiting, #log .msg.error")).to_have_count(0)
    assert traffic.statuses == [429, 200]
    assert len(set(traffic.message_ids)) == 1  # sent again with the same message id
    [(question, replies)] = await questions_and_replies(chat.sessionmaker, visitor)
    assert question.event_id == traffic.message_ids[0]
    assert (question.status, replies) == (MessageStatus.answered, 1)
    await page.locator("#lang").click()  # the busy note is gone for good, in any language
    await expect(page.locator("#log .msg.bot").last.locator(".body")).not_to_have_text(BUSY_EN)


async def test_a_503_after_the_question_was_recorded_is_retried_and_not_answered_twice(
    start_chat: StartChat, page: Page
) -> None:
    chat = await start_chat()
    traffic = Traffic()
    traffic.watch(page)
    lost = asyncio.Event()

    async def answer_lost_on_the_way(route: Route) -> None:
        if route.request.method != "POST" or lost.is_set():
            await route.continue_()
            return
        lost.set()
        answered = await route.fetch()  # tuvan records, answers and stores it
        assert answered.status == 200
        await answered.body()
        await route.fulfill(
            status=503,
            headers={"Retry-After": "2", "Content-Type": "application/json"},
            body=json.dumps({"error": "upstream timed out"}),
        )

    await page.route("**/api/chat", answer_lost_on_the_way)
    await open_chat(page, chat)
    await type_question(page, OPENER_AND_THREE[2])
    reply = page.locator("#log .msg.bot").last
    await expect(reply.locator(".body")).to_have_text(BUSY_VI)
    await expect(page.locator(ANSWERED)).to_have_count(1, timeout=ANSWER_TIMEOUT_MS)
    assert traffic.statuses == [503, 200]
    assert len(set(traffic.message_ids)) == 1
    [(question, replies)] = await questions_and_replies(chat.sessionmaker, await visitor_of(page))
    assert (question.status, question.attempts, replies) == (MessageStatus.answered, 1, 1)


async def test_a_503_saying_retry_after_0_is_sent_again_at_once_with_the_same_id(
    start_chat: StartChat, page: Page
) -> None:
    """The answers gate's refusal: the resend keeps its turn, so the page sends it again after a
    quarter of a second, not after the 5 s it waits when a busy reply says nothing."""
    chat = await start_chat()
    traffic = Traffic()
    traffic.watch(page)
    refused = asyncio.Event()

    async def gate_full_once(route: Route) -> None:
        if route.request.method != "POST" or refused.is_set():
            await route.continue_()
            return
        refused.set()
        await route.fulfill(
            status=503,
            headers={"Retry-After": "0", "Content-Type": "application/json"},
            body=json.dumps({"error": "busy"}),
        )

    await page.route("**/api/chat", gate_full_once)
    await open_chat(page, chat)
    await type_question(page, OPENER_AND_THREE[2])
    await expect(page.locator(ANSWERED)).to_have_count(1, timeout=ANSWER_TIMEOUT_MS)
    assert traffic.statuses == [503, 200]
    assert len(set(traffic.message_ids)) == 1
    assert len(traffic.sent_at) == 2
    assert traffic.sent_at[1] - traffic.sent_at[0] < 2.0  # not the default 5 s
