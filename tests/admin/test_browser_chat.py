"""The web chat page a student reads, in a real browser (Debian's headless Chromium, driven by
Playwright), on a desktop and a phone: a new conversation forgets the visitor; sources listed
once as links; phone numbers and emails tappable; the interface in the conversation's language;
text never markup; a vote that stays shown.

The whole web app on 127.0.0.1, the session's PostgreSQL on committed transactions (removed
after each test), the real embedder (tests/admin/_live_app.py). One browser per module, a fresh
context per test; a failing test leaves a screenshot of each of its pages.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.async_api import expect
from sqlalchemy import select

from bot.core.branding import brand_texts
from bot.core.settings import BrandSettings
from bot.db.models import AnswerFeedback, Contact, Conversation
from tests.admin._live_app import PHONE, LiveApp, NewPage, ask_in_chat, open_chat
from tests.admin._live_app import chromium as chromium
from tests.admin._live_app import live as live
from tests.admin._live_app import new_page as new_page

# -- the visitor starts a new conversation; an old id is forgotten -----------------------------

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


# -- the chat page a student reads (3/6) -------------------------------------------------------

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
