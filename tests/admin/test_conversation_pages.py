"""The Conversations list and a transcript over real HTTP: the list's filters and search; a
reply's tier, sources and failures, escaped, the figures folded; a web visitor shown as a tag,
never its id; a long transcript paged back; contacts without a name shown by channel, first
question and time.

This module commits for real (``sessionmaker`` is overridden, tests/admin/_conversations.py)
and deletes what each test added afterwards.
"""

from __future__ import annotations

import hashlib
import html
import re
import uuid

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import Author, Direction, Message, MessageStatus
from tests.admin._conversations import FAQ_QUESTION, SCRIPT, ask, chat_id, thread
from tests.admin._conversations import admin_settings as admin_settings
from tests.admin._conversations import forget_what_tests_commit as forget_what_tests_commit
from tests.admin._conversations import sessionmaker as sessionmaker
from tests.admin._conversations import telegram as telegram
from tests.admin._support import AdminBrowser

pytestmark = pytest.mark.usefixtures("demo_kb")


async def test_the_list_filters_and_the_transcript_shows_tier_sources_and_escapes(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, f"Câu hỏi {SCRIPT} về học bổng")
    citations = [
        {"n": 1, "title": f"Quy chế {SCRIPT}", "source": "docs/a.md", "url": "https://x.vn/a"},
        {"n": 2, "title": "Trang lạ", "source": "docs/b.md", "url": "javascript:alert(1)"},
    ]
    details = {"scores": {"chunks": [{"similarity": 0.861}], "t_doc": 0.84}, "reason": "why"}
    async with sessionmaker.begin() as session:
        question = (await thread(sessionmaker, conversation))[0]
        session.add(
            Message(
                conversation_id=conversation,
                channel="telegram",
                direction=Direction.outbound,
                author=Author.bot,
                text="Theo quy chế [1]…",
                tier="documents",
                citations=citations,
                details=details,
                status=MessageStatus.failed,
                attempts=5,
                error="Forbidden: bot was blocked by the user",
                reply_to_id=question.id,
            )
        )
        await session.execute(
            text("UPDATE messages SET status = 'failed', attempts = 3 WHERE id = :id"),
            {"id": question.id},
        )

    page = await viewer.page(f"/admin/conversations/{conversation}")
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert '<a href="https://x.vn/a"' in page
    assert "javascript:" not in page  # not a link; shown as its title only
    # the figures and the platform's error are folded under "Chi tiết kỹ thuật"
    opening = '<details class="technical"><summary>Chi tiết kỹ thuật</summary>'
    folded = "".join(part.split("</details>")[0] for part in page.split(opening)[1:])
    assert "<strong>Điểm:</strong> 0.861 (ngưỡng 0.840)" in folded
    assert "Forbidden: bot was blocked by the user" in folded
    assert "Có trục trặc khi xử lý tin nhắn này." in page
    # A question given up after its tries, and a reply: the admin sees how many.
    assert f'data-testid="failed-{question.id}">Không trả lời được sau 3 lần thử<' in page
    assert ">Không gửi được sau 5 lần thử<" in page

    listed = await viewer.page(f"/admin/conversations?channel=telegram&q={chat}")
    assert f'data-testid="conv-row-{conversation}"' in listed
    past_the_end = await viewer.page(f"/admin/conversations?q={chat}&page=9")
    assert f'data-testid="conv-row-{conversation}"' in past_the_end  # the last page instead
    assert "Trang 1/1 · 1 mục" in past_the_end
    searched = await viewer.page("/admin/conversations?q=h%E1%BB%8Dc+b%E1%BB%95ng")  # học bổng
    assert f'data-testid="conv-row-{conversation}"' in searched
    unaccented = await viewer.page("/admin/conversations?q=HOC+BONG")
    assert f'data-testid="conv-row-{conversation}"' in unaccented
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?q=hoc+phi")
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?mode=human")
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?channel=zalo")
    assert f"conv-row-{conversation}" not in await viewer.page("/admin/conversations?to=2020-01-01")


async def test_staff_of_every_role_see_a_web_visitor_as_a_tag_never_their_id(
    viewer: AdminBrowser, admin: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    visitor = uuid.uuid4().hex  # the key to the visitor's conversation in the chat page
    web = await ask(sessionmaker, visitor, FAQ_QUESTION, channel="web")
    chat = chat_id()
    telegram = await ask(sessionmaker, chat, FAQ_QUESTION)
    tag = hashlib.sha256(visitor.encode()).hexdigest()[:6]
    for b in (viewer, admin):
        listing = await b.page("/admin/conversations")
        assert f"conv-row-{web}" in listing
        transcript = await b.page(f"/admin/conversations/{web}")
        for page in (listing, transcript):
            assert visitor not in page
            assert f'data-testid="conv-contact-ref">Khách web · {tag}<' in page
        # a platform's id opens nothing by itself: it is still shown
        assert chat in await b.page(f"/admin/conversations/{telegram}")


async def test_a_long_transcript_pages_back_to_older_messages(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), "tin nhắn số 0")
    async with sessionmaker.begin() as session:
        session.add_all(
            Message(
                conversation_id=conversation,
                channel="telegram",
                direction=Direction.inbound,
                author=Author.user,
                text=f"tin nhắn số {i}",
                status=MessageStatus.skipped,
            )
            for i in range(1, 205)
        )
    newest = await viewer.page(f"/admin/conversations/{conversation}")
    assert "tin nhắn số 204<" in newest
    assert "tin nhắn số 4<" not in newest  # 200 a page: 5..204
    older = re.search(r'href="([^"]*)" data-testid="conv-older"', newest)
    assert older
    page = await viewer.page(html.unescape(older.group(1)))
    assert "tin nhắn số 4<" in page
    assert "tin nhắn số 0<" in page
    assert "tin nhắn số 5<" not in page
    assert 'data-testid="conv-newest"' in page
    assert 'data-testid="conv-older"' not in page


# -- a contact without a name: channel, first question, time ----------------------------------


async def test_a_contact_without_a_name_shows_its_channel_first_question_and_time(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    question = (
        "Cho em hỏi học phí ngành Công nghệ thông tin hệ chất lượng cao năm 2026 là bao nhiêu ạ?"
    )
    visitor = uuid.uuid4().hex
    made = [
        await ask(sessionmaker, user, question, channel=channel, user_name=None)
        for channel, user in (("web", visitor), ("zalo", f"z{uuid.uuid4().hex[:12]}"))
    ]
    rows = []
    for conversation in made:
        first = (await thread(sessionmaker, conversation))[0]
        rows.append((conversation, first.channel, first.created_at))
    shortened = "Cho em hỏi học phí ngành Công nghệ thông tin hệ chất lượng…"
    listing = await viewer.page("/admin/conversations")
    for conversation, channel, at in rows:
        name = "Khách web" if channel == "web" else "Zalo"
        label = html.escape(f"{name} · “{shortened}” · {at.strftime('%d/%m/%Y %H:%M')}")
        found = re.search(rf'data-testid="conv-row-{conversation}".*?</tr>', listing, re.S)
        assert found
        assert f'data-testid="conv-label">{label}<' in found.group(0)
        assert "(không tên)" not in found.group(0)
        view = await viewer.page(f"/admin/conversations/{conversation}")
        assert f'data-testid="conv-label">{label}<' in view
        assert visitor not in view
