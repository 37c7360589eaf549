"""Staff take a web chat over in a real browser (Debian's headless Chromium, driven by
Playwright) and reply: the bot stays quiet, the visitor's open page shows the reply by itself,
the first one within 5 s without the student typing.

The whole web app on 127.0.0.1, the session's PostgreSQL on committed transactions (removed
after each test), the real embedder (tests/admin/_live_app.py). One browser per module, a fresh
context per test; a failing test leaves a screenshot of each of its pages.
"""

from __future__ import annotations

import uuid

from playwright.async_api import expect

from admin.contacts import visitor_tag
from bot.db.models import StaffRole
from bot.worker.loop import Worker
from tests.admin._live_app import LiveApp, NewPage, ask_in_chat, open_chat, signed_in
from tests.admin._live_app import chromium as chromium
from tests.admin._live_app import live as live
from tests.admin._live_app import new_page as new_page
from tests.admin._support import ANSWER_TIMEOUT_MS, words

# What the web chat shows a visitor once staff have the conversation (bot/static/chat.html).
HANDOVER_NOTE = "Cán bộ tư vấn đang theo dõi cuộc trò chuyện này và sẽ trả lời bạn tại đây."


# -- staff take a web chat over and reply; the visitor sees it ----------------------------------


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


# -- the first staff reply reaches the open chat by itself ------------------------------------

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
