"""The admin in a real browser (Debian's headless Chromium, driven by Playwright): what staff and
visitors see on the screen, end to end — the whole web app on 127.0.0.1, the session's
PostgreSQL on committed transactions (removed after each test), the real embedder.

One browser per module, a fresh context (cookies, storage) per test; a failing test leaves a
screenshot of each of its pages in test-artifacts/screenshots/.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, Page, expect
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from admin.contacts import visitor_tag
from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.conversations.store import upsert_conversation
from bot.core.branding import brand_texts
from bot.core.settings import BrandSettings, Settings
from bot.db.engine import make_sessionmaker
from bot.db.models import (
    AnswerFeedback,
    Author,
    Chunk,
    Contact,
    Conversation,
    Direction,
    FaqEntry,
    FaqOrigin,
    FaqStatus,
    Message,
    MessageStatus,
    StaffRole,
)
from bot.runtime import Runtime
from bot.web.app import create_app
from bot.worker.loop import Worker
from tests.admin._support import (
    ANSWER_TIMEOUT_MS,
    Staff,
    add_staff,
    chromium_browser,
    delete_rows_since,
    log_in,
    rows_since,
    screenshot_if_failed,
    screenshot_path,
    words,
)

PHONE = {"width": 390, "height": 844}
ANSWERED = re.compile(r"\btier-(faq|documents|fallback)\b")  # the chat marks a finished reply
# What the web chat shows a visitor once staff have the conversation (bot/static/chat.html).
HANDOVER_NOTE = "Cán bộ tư vấn đang theo dõi cuộc trò chuyện này và sẽ trả lời bạn tại đây."
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


# -- 1. log in, log out ---------------------------------------------------------------------------


async def test_login_shows_the_error_then_signs_in_and_out(
    live: LiveApp, new_page: NewPage
) -> None:
    staff = await live.staff(StaffRole.editor)
    page = await new_page()
    await page.goto(f"{live.base}/admin/faq")
    await expect(page.get_by_test_id("login-form")).to_be_visible()  # signed out: sent to log in

    await log_in(page, live.base, staff, password="not the password")
    await expect(page.get_by_role("alert")).to_have_text(words("login.failed"))
    await expect(page.get_by_test_id("who")).to_have_count(0)

    await log_in(page, live.base, staff)
    await expect(page).to_have_url(f"{live.base}/admin/dashboard")  # the landing page
    await expect(page.get_by_test_id("who")).to_contain_text(staff.email)
    await expect(page.get_by_role("heading", level=1)).to_have_text(words("dash.title"))

    await page.get_by_test_id("logout").click()
    await expect(page.get_by_test_id("flash")).to_have_text(words("msg.logged_out"))
    await expect(page.get_by_test_id("who")).to_have_count(0)
    await page.goto(f"{live.base}/admin/faq")
    await expect(page.get_by_test_id("login-form")).to_be_visible()


# -- 2. an FAQ entry made in the admin answers in the web chat, verbatim ---------------------------


async def test_a_published_entry_answers_verbatim_in_the_web_chat_and_edits_show_at_once(
    live: LiveApp, new_page: NewPage
) -> None:
    tag = uuid.uuid4().hex[:8]
    question = "Sinh viên năm nhất có được mang xe đạp điện vào ký túc xá không?"
    answer = f"Được. Xe đạp điện gửi ở nhà xe khu C, sạc 22:00–6:00 (mã {tag})."
    changed = f"Từ học kỳ 2 chỉ gửi ở nhà xe khu D; không sạc qua đêm (mã {tag})."

    admin = await signed_in(live, new_page, StaffRole.editor)
    await admin.get_by_test_id("faq-new").click()
    await admin.get_by_label(words("faq.question"), exact=True).fill(question)
    await admin.get_by_label(words("faq.answer"), exact=True).fill(answer)
    await admin.get_by_test_id("faq-save").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.created"))
    await expect(admin.get_by_test_id("faq-status")).to_have_text(words("faq.status.draft"))
    await admin.get_by_test_id("faq-publish").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.published"))
    await expect(admin.get_by_test_id("faq-status")).to_have_text(words("faq.status.published"))

    chat = await new_page()
    await open_chat(chat, live.base)
    first = await ask_in_chat(chat, question)
    assert first == answer
    await expect(chat.locator(".msg.bot").last).to_have_class(re.compile(r"\btier-faq\b"))

    await admin.get_by_label(words("faq.answer"), exact=True).fill(changed)
    await admin.get_by_test_id("faq-save").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.saved"))
    assert await ask_in_chat(chat, question) == changed


# -- 3. a generated entry, approved in the review queue, answers ---------------------------------


async def generated_draft(live: LiveApp, question: str, answer: str) -> tuple[int, str]:
    """A draft as ``tuvan faq generate`` leaves it: traced to a chunk of a demo document."""
    async with live.sessionmaker.begin() as session:
        chunk = await session.scalar(select(Chunk).order_by(Chunk.id).limit(1))
        assert chunk is not None, "the demo knowledge base has chunks"
        entry = FaqEntry(
            question=question,
            answer=answer,
            language="vi",
            status=FaqStatus.draft,
            origin=FaqOrigin.generated,
            source_document_id=chunk.document_id,
            source_chunk_id=chunk.id,
            source_text=chunk.text,
        )
        session.add(entry)
        await session.flush()
        return entry.id, chunk.text


async def test_an_approved_generated_entry_answers_in_the_web_chat(
    live: LiveApp, new_page: NewPage
) -> None:
    tag = uuid.uuid4().hex[:8]
    question = "Thí sinh tự do đã tốt nghiệp từ năm trước có được xét tuyển bằng học bạ không?"
    answer = f"Có. Thí sinh tự do nộp bản sao học bạ THPT có chứng thực (mã {tag})."
    entry, source = await generated_draft(live, question, answer)

    admin = await signed_in(live, new_page, StaffRole.editor)
    await admin.get_by_test_id("nav-review").click()
    card = admin.get_by_test_id(f"review-card-{entry}")
    shown = card.get_by_test_id(f"review-source-{entry}")
    await expect(shown).to_be_visible()
    assert " ".join((await shown.inner_text()).split()) == " ".join(source.split())
    await expect(card.get_by_label(words("faq.question"), exact=True)).to_have_value(question)
    await expect(card.get_by_label(words("faq.answer"), exact=True)).to_have_value(answer)
    proposed = card.get_by_test_id(f"review-form-{entry}")
    source_box, proposed_box = await shown.bounding_box(), await proposed.bounding_box()
    assert source_box is not None
    assert proposed_box is not None
    assert source_box["x"] + source_box["width"] <= proposed_box["x"], "side by side on a laptop"

    await card.get_by_test_id(f"review-approve-{entry}").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.approved"))
    await expect(admin.get_by_test_id(f"review-card-{entry}")).to_have_count(0)

    chat = await new_page()
    await open_chat(chat, live.base)
    assert await ask_in_chat(chat, question) == answer
    await expect(chat.locator(".msg.bot").last).to_have_class(re.compile(r"\btier-faq\b"))


# -- 4. staff take a web chat over and reply; the visitor sees it ----------------------------------


async def test_staff_take_over_a_web_chat_and_the_visitor_sees_the_reply(
    live: LiveApp, new_page: NewPage
) -> None:
    tag = uuid.uuid4().hex[:8]
    first = f"Em muốn hỏi về học bổng cho thí sinh ở tỉnh xa, em tên Lan{tag}"
    second = "Em cần gặp cán bộ tư vấn ạ"
    reply = f"Chào Lan, chị là cán bộ tuyển sinh; em gọi 024 3333 8888 nhé ({tag})."

    chat = await new_page()
    await open_chat(chat, live.base)
    await ask_in_chat(chat, first)
    visitor = await chat.evaluate("localStorage.getItem('tuvan.visitor')")

    admin = await signed_in(live, new_page, StaffRole.editor)
    await admin.get_by_test_id("nav-conversations").click()
    await admin.get_by_label(words("conv.search"), exact=True).fill(f"Lan{tag}")
    await admin.get_by_test_id("conv-filter-submit").click()
    shown_as = words("conv.web_visitor", tag=visitor_tag(visitor))  # never the id itself
    row = admin.get_by_test_id("conv-table").locator("tr", has_text=shown_as)
    await expect(row).to_have_count(1)
    await expect(admin.get_by_test_id("conv-table")).not_to_contain_text(visitor)
    await row.get_by_role("link").click()
    transcript = admin.get_by_test_id("transcript")
    await expect(transcript.locator("tr[data-author=user]")).to_contain_text(first)
    await expect(transcript.locator("tr[data-author=bot]")).to_have_count(1)

    await admin.get_by_test_id("conv-take-over").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.taken_over"))
    await expect(admin.get_by_test_id("conv-mode")).to_have_text(words("conv.mode.human"))

    # The bot stays quiet now: the visitor is told a person will answer here.
    await chat.locator("#q").fill(second)
    await chat.locator("#send").click()
    await expect(chat.get_by_text(HANDOVER_NOTE)).to_be_visible(timeout=ANSWER_TIMEOUT_MS)

    await admin.get_by_label(words("conv.reply_label"), exact=True).fill(reply)
    await admin.get_by_test_id("conv-reply").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.reply_queued"))
    staff_line = transcript.locator("tr[data-author=staff]")
    await expect(staff_line).to_contain_text(reply)
    await expect(staff_line).to_contain_text(words("conv.status.queued"))

    # The visitor's open page picks the reply up by itself (it polls while staff have it).
    await expect(chat.locator(".msg.staff .body").last).to_have_text(
        reply, timeout=ANSWER_TIMEOUT_MS
    )

    worker = Worker(live.runtime.settings, live.sessionmaker, live.runtime.answerer, {}, live.http)
    await worker.drain()
    await admin.reload()
    await expect(staff_line).to_contain_text(words("conv.status.sent"))


# -- 4a. the first staff reply reaches the open chat by itself ------------------------------------

LIVE_REPLY_MS = 5_000  # the target: the first staff reply shows within 5 s, no typing


async def test_the_first_staff_reply_reaches_an_open_chat_without_the_student_typing(
    live: LiveApp, new_page: NewPage
) -> None:
    tag = uuid.uuid4().hex[:8]
    question = f"Em muốn hỏi học bổng cho thí sinh vùng sâu, em tên Minh{tag}"
    reply = f"Chào Minh, chị là cán bộ tuyển sinh; học bổng vùng sâu em xem mục 4 nhé ({tag})."

    chat = await new_page()
    await open_chat(chat, live.base)
    await ask_in_chat(chat, question)

    admin = await signed_in(live, new_page, StaffRole.editor)
    await admin.get_by_test_id("nav-conversations").click()
    await admin.get_by_label(words("conv.search"), exact=True).fill(f"Minh{tag}")
    await admin.get_by_test_id("conv-filter-submit").click()
    await admin.get_by_test_id("conv-table").locator("tbody tr").first.get_by_role("link").click()
    await admin.get_by_test_id("conv-take-over").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.taken_over"))
    await admin.get_by_label(words("conv.reply_label"), exact=True).fill(reply)
    await admin.get_by_test_id("conv-reply").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.reply_queued"))

    # The student typed nothing since the bot's answer: the open page shows the reply by itself.
    await expect(chat.locator(".msg.staff .body").last).to_have_text(reply, timeout=LIVE_REPLY_MS)
    assert await chat.locator("#q").input_value() == ""


# -- 4b. the visitor starts a new conversation; an old id is forgotten -----------------------------

VISITOR_ID_128_BITS = re.compile(r"^[0-9a-f]{32}$")
WELCOME = brand_texts(BrandSettings(), "vi").welcome  # TUVAN_BRAND__WELCOME_VI's default


async def test_the_new_conversation_button_forgets_the_visitor_and_starts_clean(
    live: LiveApp, new_page: NewPage
) -> None:
    chat = await new_page()
    urls: list[str] = []
    chat.on("request", lambda request: urls.append(request.url))
    await open_chat(chat, live.base)
    await ask_in_chat(chat, "Mã trường của Trường Đại học Công nghệ Sông Hồng là gì?")
    first = await chat.evaluate("localStorage.getItem('tuvan.visitor')")
    assert VISITOR_ID_128_BITS.match(first)

    await chat.get_by_role("button", name="Cuộc trò chuyện mới").click()
    log = chat.locator("#log .msg")
    await expect(log).to_have_count(1)
    await expect(log.first).to_contain_text(WELCOME)
    second = await chat.evaluate("localStorage.getItem('tuvan.visitor')")
    assert VISITOR_ID_128_BITS.match(second)
    assert second != first

    await chat.reload()  # the new id has no history: still clean
    await expect(log.first).to_contain_text(WELCOME)
    await expect(log).to_have_count(1)
    assert await chat.evaluate("localStorage.getItem('tuvan.visitor')") == second

    # An id the page kept past the server's visitor_days is forgotten when the page opens.
    await chat.evaluate(
        "([id, days]) => { localStorage.setItem('tuvan.visitor', id);"
        " localStorage.setItem('tuvan.visitor.used', String(Date.now() - days * 86400000)); }",
        [first, live.runtime.settings.web.visitor_days + 1],
    )
    await chat.reload()
    await expect(log.first).to_contain_text(WELCOME)
    await expect(log).to_have_count(1)
    third = await chat.evaluate("localStorage.getItem('tuvan.visitor')")
    assert third not in (first, second)

    # The first conversation is still there for staff; no URL ever held a visitor id.
    async with live.sessionmaker() as session:
        kept = await session.scalar(select(Contact.id).where(Contact.external_id == first))
    assert kept is not None
    assert "/api/chat/history" in " ".join(urls)
    assert not [u for u in urls if any(v in u for v in (first, second, third))]


# -- 5. the phone layout ----------------------------------------------------------------------


async def test_the_faq_list_fits_a_phone_without_sideways_scrolling(
    live: LiveApp, new_page: NewPage
) -> None:
    page = await signed_in(
        live, new_page, StaffRole.editor, viewport=PHONE, is_mobile=True, has_touch=True
    )
    await page.goto(f"{live.base}/admin/faq")
    await expect(page.get_by_test_id("faq-table")).to_be_visible()
    width, inner = await page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert inner == PHONE["width"]
    assert width <= inner, f"the page is {width}px wide on a {inner}px screen"


# -- 6. the chat page a student reads (3/6) -------------------------------------------------------

DESKTOP = {"width": 1280, "height": 800}


@pytest.mark.parametrize("size", ["desktop", "phone"])
async def test_a_documents_answer_lists_its_sources_once_as_links(
    live: LiveApp, new_page: NewPage, size: str
) -> None:
    phone = size == "phone"
    options: dict[str, Any] = (
        {"viewport": PHONE, "is_mobile": True, "has_touch": True}
        if phone
        else {"viewport": DESKTOP}
    )
    chat = await new_page(**options)
    await open_chat(chat, live.base)
    body = await ask_in_chat(chat, "cach dang ky ktx ntn ad")
    reply = chat.locator(".msg.bot").last
    await expect(reply).to_have_class(re.compile(r"\btier-documents\b"))
    # No plain-text source list in the bubble.
    assert "Nguồn:" not in body
    assert "https://" not in body
    sources = reply.locator(".links")
    await expect(sources.locator("summary")).to_have_text(re.compile(r"^Nguồn \(\d\)$"))
    links = sources.locator("li a")
    assert await links.count() >= 1
    assert (await links.first.get_attribute("href") or "").startswith("https://")
    # Collapsed on a phone (the answer first), open on a desktop.
    assert await sources.evaluate("d => d.open") is (not phone)
    # The reply's first line is in view, however long the reply is.
    top, log_top = await reply.evaluate(
        "b => [b.getBoundingClientRect().top, document.getElementById('log')"
        ".getBoundingClientRect().top]"
    )
    assert top >= log_top - 1
    # The placeholder fits its box.
    needed, room = await chat.evaluate(
        """() => {
            const q = document.getElementById("q");
            const style = getComputedStyle(q);
            const ctx = document.createElement("canvas").getContext("2d");
            ctx.font = `${style.fontSize} ${style.fontFamily}`;
            const pad = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
            return [ctx.measureText(q.placeholder).width, q.clientWidth - pad];
        }"""
    )
    assert needed <= room, f"the placeholder needs {needed:.0f}px and has {room:.0f}px"


async def test_phone_numbers_and_emails_in_an_answer_are_tappable(
    live: LiveApp, new_page: NewPage
) -> None:
    chat = await new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    await open_chat(chat, live.base)
    body = await ask_in_chat(chat, "sdt hotline tuyen sinh la gi ad")
    assert "028 3999 1234" in body
    reply = chat.locator(".msg.bot").last
    await expect(reply.locator('.body a[href="tel:02839991234"]').first).to_have_text(
        "028 3999 1234"
    )
    mail = await ask_in_chat(chat, "email phòng tuyển sinh là gì ạ")
    assert "tuyensinh@shut.example.vn" in mail
    link = chat.locator(".msg.bot").last.locator('.body a[href^="mailto:"]').first
    await expect(link).to_have_attribute("href", "mailto:tuyensinh@shut.example.vn")


async def test_the_chat_interface_follows_the_language_of_the_conversation(
    live: LiveApp, new_page: NewPage
) -> None:
    chat = await new_page()
    await open_chat(chat, live.base)
    await expect(chat.locator("#send")).to_have_text("Gửi")
    await ask_in_chat(chat, "What is the tuition fee for international students?")
    await expect(chat.locator("#send")).to_have_text("Send")
    await expect(chat.locator("#q")).to_have_attribute("placeholder", "Type your question…")
    await ask_in_chat(chat, "Học phí ngành Khoa học Máy tính là bao nhiêu?")
    await expect(chat.locator("#send")).to_have_text("Gửi")


async def test_text_in_an_answer_is_never_markup(live: LiveApp, new_page: NewPage) -> None:
    chat = await new_page()
    await open_chat(chat, live.base)
    body = await ask_in_chat(chat, '<img src=x onerror="window.pwned=1"> hotline tuyển sinh')
    assert await chat.evaluate("window.pwned === undefined")
    assert await chat.locator(".msg img").count() == 0
    assert body


async def test_a_visitor_marks_an_answer_and_the_choice_stays_shown(
    live: LiveApp, new_page: NewPage
) -> None:
    chat = await new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    await open_chat(chat, live.base)
    welcome = chat.locator(".msg.bot").first
    await expect(welcome.locator(".votes")).to_have_count(0)  # the welcome is not an answer
    await ask_in_chat(chat, "sdt hotline tuyen sinh la gi ad")
    votes = chat.locator(".msg.bot").last.locator(".votes button")
    await expect(votes).to_have_text(["👍", "👎"])
    await expect(votes.nth(1)).to_have_attribute("aria-pressed", "false")
    await votes.nth(1).click()
    await expect(votes.nth(1)).to_have_attribute("aria-pressed", "true")
    await expect(votes.nth(0)).to_have_attribute("aria-pressed", "false")
    visitor = await chat.evaluate("localStorage.getItem('tuvan.visitor')")
    async with live.sessionmaker() as session:
        contact = await session.scalar(
            select(Contact).where(Contact.channel == "web", Contact.external_id == visitor)
        )
        assert contact is not None
        stored = await session.scalars(
            select(AnswerFeedback.value)
            .join(Conversation, Conversation.id == AnswerFeedback.conversation_id)
            .where(Conversation.contact_id == contact.id)
        )
        assert stored.all() == [-1]
    await chat.reload()  # the history says which was chosen
    votes = chat.locator(".msg.bot").last.locator(".votes button")
    await expect(votes.nth(1)).to_have_attribute("aria-pressed", "true")
    await votes.nth(0).click()
    await expect(votes.nth(0)).to_have_attribute("aria-pressed", "true")
    await expect(votes.nth(1)).to_have_attribute("aria-pressed", "false")


def test_screenshots_are_named_after_the_test_and_the_page(tmp_path: Path) -> None:
    folder = tmp_path / "test-artifacts" / "screenshots"
    assert screenshot_path(tmp_path, "tests/admin/test_browser.py::test_x[vi-1]") == (
        folder / "test_x_vi-1.png"
    )
    assert screenshot_path(tmp_path, "tests/admin/test_browser.py::test_x", 2) == (
        folder / "test_x-2.png"
    )


async def test_staff_open_an_answer_to_look_at_again_and_mark_it_seen(
    live: LiveApp, new_page: NewPage
) -> None:
    tag = uuid.uuid4().hex[:6]
    question = f"Trường có câu lạc bộ cờ vây {tag} không?"
    async with live.sessionmaker.begin() as session:
        conversation = await upsert_conversation(session, "telegram", f"recheck-{tag}")
        asked = Message(
            conversation_id=conversation,
            channel="telegram",
            direction=Direction.inbound,
            author=Author.user,
            text=question,
            tier="fallback",
            status=MessageStatus.answered,
        )
        session.add(asked)
        await session.flush()
        reply = Message(
            conversation_id=conversation,
            channel="telegram",
            direction=Direction.outbound,
            author=Author.bot,
            text="Xin lỗi, mình chưa có thông tin này.",
            tier="fallback",
            details={"reason": "FAQ: similarity 0.7 below t_faq 0.925", "scores": {}},
            status=MessageStatus.sent,
            reply_to_id=asked.id,
        )
        session.add(reply)
        await session.flush()
        answer = reply.id

    admin = await signed_in(live, new_page, StaffRole.editor)
    await admin.get_by_test_id("nav-recheck").click()
    await expect(admin.get_by_test_id(f"signal-{answer}-fallback")).to_be_visible()
    await admin.get_by_test_id(f"open-{answer}").click()
    await expect(admin.get_by_test_id("recheck-question")).to_have_text(question)
    await expect(admin.get_by_test_id("recheck-tier")).to_have_text(words("recheck.tier.fallback"))
    await expect(admin.get_by_test_id("recheck-tech")).not_to_have_attribute("open", "")
    await admin.get_by_test_id("recheck-settle").click()
    await expect(admin.get_by_test_id("flash")).to_have_text(words("msg.settled"))
    await expect(admin.get_by_test_id(f"member-{answer}")).to_have_count(0)
