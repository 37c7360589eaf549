""" "Cần xử lý" in the Conversations pages, over real HTTP with the real worker and a fake
Telegram Bot API: a request for a person or a 👎 puts the conversation first and in the menu's
count, with its reason; a staff reply or "Đã xử lý" clears it.

The worker's queues are about transactions between sessions, so this module commits for real
(``sessionmaker`` is overridden, tests/admin/_conversations.py) and deletes what each test added
afterwards.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.clock import utcnow
from bot.db.models import AuditEntry, Conversation
from bot.worker.loop import Worker
from tests.admin._conversations import FAQ_QUESTION, STAFF_TEXT, ask, chat_id, sent_texts
from tests.admin._conversations import admin_settings as admin_settings
from tests.admin._conversations import forget_what_tests_commit as forget_what_tests_commit
from tests.admin._conversations import sessionmaker as sessionmaker
from tests.admin._conversations import telegram as telegram
from tests.admin._conversations import worker as worker
from tests.admin._support import AdminBrowser
from tests.fakes.telegram_api import FakeTelegramApi

pytestmark = pytest.mark.usefixtures("demo_kb")


async def test_a_student_asking_for_a_person_waits_at_the_top_until_staff_reply(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    quiet = await ask(sessionmaker, chat_id(), FAQ_QUESTION)
    chat = chat_id()
    waiting = await ask(sessionmaker, chat, "e muốn nói chuyện với người thật được ko ạ")
    await worker.drain()
    later = await ask(sessionmaker, chat_id(), FAQ_QUESTION)  # newer activity than both
    await worker.drain()

    reply = sent_texts(telegram, chat)[-1]
    assert "giờ hành chính" in reply  # the bot says when staff usually answer
    async with sessionmaker() as session:
        marks = dict(
            (
                await session.execute(
                    select(Conversation.id, Conversation.waiting_since).where(
                        Conversation.id.in_([quiet, waiting, later])
                    )
                )
            ).all()
        )
    assert marks[waiting] is not None
    assert marks[quiet] is None
    assert marks[later] is None

    page = await editor.page("/admin/conversations")
    order = [int(n) for n in re.findall(r'data-testid="conv-row-(\d+)"', page)]
    assert order[0] == waiting  # waiting for a person: first, before newer activity
    assert order.index(later) < order.index(quiet)
    assert page.count('data-testid="conv-waiting"') == 1

    response = await editor.post(f"/admin/conversations/{waiting}/reply", {"text": STAFF_TEXT})
    assert response.status == 303
    async with sessionmaker() as session:
        conversation = await session.get(Conversation, waiting)
        assert conversation is not None
        assert conversation.waiting_since is None  # a person answered
    page = await editor.page("/admin/conversations")
    assert 'data-testid="conv-waiting"' not in page


# -- "cần xử lý": a request for a person or a 👎, first in the list and counted in the menu -------


async def flag(sm: async_sessionmaker[AsyncSession], conversation_id: int, **marks: Any) -> None:
    """Set ``waiting_since`` / ``flagged_since`` as the answerer and the 👎 button do."""
    async with sm.begin() as session:
        conversation = await session.get(Conversation, conversation_id)
        assert conversation is not None
        for name, value in marks.items():
            setattr(conversation, name, value)


def menu_count(page: str) -> int | None:
    found = re.search(r'data-testid="nav-attention"[^>]*>(\d+)<', page)
    return int(found.group(1)) if found else None


async def attention_rows(sm: async_sessionmaker[AsyncSession]) -> int:
    async with sm() as session:
        return int(
            await session.scalar(
                text(
                    "SELECT count(*) FROM conversations "
                    "WHERE waiting_since IS NOT NULL OR flagged_since IS NOT NULL"
                )
            )
            or 0
        )


async def test_a_thumbs_down_puts_the_conversation_first_with_its_reason_and_in_the_menu_count(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    before = await attention_rows(sessionmaker)
    flagged = await ask(sessionmaker, chat_id(), "Học phí ngành Luật bao nhiêu?")
    waiting = await ask(sessionmaker, chat_id(), "Cho em gặp cán bộ tư vấn")
    both = await ask(sessionmaker, chat_id(), "Câu trả lời sai rồi, cho em gặp người thật")
    newer = await ask(sessionmaker, chat_id(), FAQ_QUESTION)  # the newest activity, no mark
    start = utcnow() - timedelta(minutes=30)
    await flag(sessionmaker, flagged, flagged_since=start)
    await flag(sessionmaker, waiting, waiting_since=start + timedelta(minutes=1))
    await flag(sessionmaker, both, waiting_since=start + timedelta(minutes=5), flagged_since=start)

    page = await viewer.page("/admin/conversations")
    order = [int(n) for n in re.findall(r'data-testid="conv-row-(\d+)"', page)]
    assert order.index(newer) > max(order.index(c) for c in (flagged, waiting, both))
    assert order.index(flagged) < order.index(waiting)  # the longest waiting first

    def row(conversation: int) -> str:
        found = re.search(rf'data-testid="conv-row-{conversation}".*?</tr>', page, re.S)
        assert found
        return found.group(0)

    assert "cần xử lý" in row(flagged)
    assert 'data-testid="conv-flagged">chê một câu trả lời (👎)<' in row(flagged)
    assert 'data-testid="conv-waiting"' not in row(flagged)
    assert 'data-testid="conv-waiting">muốn gặp cán bộ tư vấn<' in row(waiting)
    assert 'data-testid="conv-flagged"' in row(both)
    assert 'data-testid="conv-waiting"' in row(both)
    assert "cần xử lý" not in row(newer)
    assert menu_count(page) == before + 3
    # The count is in the menu of every page, not only the list's.
    assert menu_count(await viewer.page("/admin/faq")) == before + 3


async def test_a_staff_reply_clears_both_marks(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), "Câu trả lời sai rồi")
    await flag(sessionmaker, conversation, waiting_since=utcnow(), flagged_since=utcnow())
    response = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": STAFF_TEXT})
    assert response.status == 303
    async with sessionmaker() as session:
        found = await session.get(Conversation, conversation)
        assert found is not None
        assert (found.waiting_since, found.flagged_since) == (None, None)


async def test_handled_clears_both_marks_is_audited_and_needs_the_csrf_token(
    editor: AdminBrowser, viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), "Câu trả lời sai rồi")
    flagged_at = utcnow() - timedelta(minutes=3)
    await flag(sessionmaker, conversation, waiting_since=flagged_at, flagged_since=flagged_at)
    view = await editor.page(f"/admin/conversations/{conversation}")
    assert 'data-testid="conv-handled"' in view
    assert 'data-testid="conv-handled"' not in await viewer.page(
        f"/admin/conversations/{conversation}"
    )

    path = f"/admin/conversations/{conversation}/handled"
    assert (await editor.post(path, csrf="")).status == 403  # no token: nothing cleared
    assert (await viewer.post(path)).status == 403  # a viewer may not
    assert await attention_rows(sessionmaker) >= 1
    async with sessionmaker() as session:
        still = await session.get(Conversation, conversation)
        assert still is not None
        assert still.flagged_since is not None

    response = await editor.post(path)
    assert response.status == 303
    assert "msg=handled" in response.headers["Location"]
    async with sessionmaker() as session:
        found = await session.get(Conversation, conversation)
        assert found is not None
        assert (found.waiting_since, found.flagged_since) == (None, None)
        entry = await session.scalar(
            select(AuditEntry).where(
                AuditEntry.entity == "conversation",
                AuditEntry.entity_id == conversation,
                AuditEntry.action == "handled",
            )
        )
    assert entry is not None
    assert entry.before == {
        "waiting_since": flagged_at.isoformat(),
        "flagged_since": flagged_at.isoformat(),
    }
    assert entry.after == {"waiting_since": None, "flagged_since": None}
    page = await editor.page(f"/admin/conversations/{conversation}?msg=handled")
    assert "Đã đánh dấu là đã xử lý." in page
    assert 'data-testid="conv-handled"' not in page
    assert (await editor.post("/admin/conversations/999999999/handled")).status == 404
