"""The admin in a real browser (Debian's headless Chromium, driven by Playwright), what staff
see and do, end to end: log in and out; an FAQ entry made in the admin, or a generated one
approved in the review queue, answers in the web chat; the FAQ list on a phone; an answer opened
again from "Cần xem lại"; a failing test's screenshots named after it.

The whole web app on 127.0.0.1, the session's PostgreSQL on committed transactions (removed
after each test), the real embedder (tests/admin/_live_app.py). One browser per module, a fresh
context (cookies, storage) per test; a failing test leaves a screenshot of each of its pages in
test-artifacts/screenshots/.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from playwright.async_api import expect
from sqlalchemy import select

from bot.conversations.store import upsert_conversation
from bot.db.models import (
    Author,
    Chunk,
    Direction,
    FaqEntry,
    FaqOrigin,
    FaqStatus,
    Message,
    MessageStatus,
    StaffRole,
)
from tests.admin._live_app import PHONE, LiveApp, NewPage, ask_in_chat, open_chat, signed_in
from tests.admin._live_app import chromium as chromium
from tests.admin._live_app import live as live
from tests.admin._live_app import new_page as new_page
from tests.admin._support import log_in, screenshot_path, words

# -- log in, log out ---------------------------------------------------------------------------


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


# -- an FAQ entry made in the admin answers in the web chat, verbatim ---------------------------


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


# -- a generated entry, approved in the review queue, answers ---------------------------------


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


# -- the phone layout ----------------------------------------------------------------------


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
