"""Staff take a conversation over, reply and hand it back, over real HTTP with the real worker
and a fake Telegram Bot API: take over (the bot stays quiet), reply (delivered through the
channel, stored as staff), hand back (the bot answers again); who may; the web chat's polling
flag.

The worker's queues are about transactions between sessions, so this module commits for real
(``sessionmaker`` is overridden, tests/admin/_conversations.py) and deletes what each test added
afterwards.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import AuditEntry, Conversation, Message
from bot.worker.loop import Worker
from tests.admin._conversations import (
    FAQ_QUESTION,
    STAFF_TEXT,
    ask,
    audit_actions,
    chat_id,
    sent_texts,
    thread,
)
from tests.admin._conversations import admin_settings as admin_settings
from tests.admin._conversations import forget_what_tests_commit as forget_what_tests_commit
from tests.admin._conversations import sessionmaker as sessionmaker
from tests.admin._conversations import telegram as telegram
from tests.admin._conversations import worker as worker
from tests.admin._support import AdminBrowser
from tests.fakes.telegram_api import FakeTelegramApi

pytestmark = pytest.mark.usefixtures("demo_kb")


async def test_take_over_keeps_the_bot_quiet_in_that_conversation(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()
    assert len(sent_texts(telegram, chat)) == 1  # the bot answers before the take-over

    response = await editor.post(f"/admin/conversations/{conversation}/take-over")
    assert response.status == 303
    assert response.headers["Location"] == f"/admin/conversations/{conversation}?msg=taken_over"
    page = await editor.page(f"/admin/conversations/{conversation}")
    assert 'data-testid="conv-hand-back"' in page

    await ask(sessionmaker, chat, "Học phí một năm là bao nhiêu?")
    await worker.drain()
    rows = await thread(sessionmaker, conversation)
    assert [(m.direction, m.author, m.status) for m in rows] == [
        ("in", "user", "answered"),
        ("out", "bot", "sent"),
        ("in", "user", "skipped"),  # stored, not answered: a person has the conversation
    ]
    assert len(sent_texts(telegram, chat)) == 1
    assert await audit_actions(sessionmaker, conversation) == ["take_over"]


async def test_a_staff_reply_goes_out_through_the_channel_and_is_stored_as_staff(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()

    response = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": STAFF_TEXT})
    assert response.status == 303
    page = await editor.page(f"/admin/conversations/{conversation}")
    staff = (await thread(sessionmaker, conversation))[-1]
    assert (staff.author, staff.direction, staff.status, staff.text) == (
        "staff",
        "out",
        "queued",
        STAFF_TEXT,
    )
    assert STAFF_TEXT in page  # shown at once, with its status
    assert f'data-testid="status-{staff.id}">chờ gửi<' in page

    await worker.drain()
    assert sent_texts(telegram, chat)[-1] == STAFF_TEXT
    async with sessionmaker() as session:
        delivered = await session.get(Message, staff.id)
        mode = await session.scalar(
            select(Conversation.mode).where(Conversation.id == conversation)
        )
        [actor] = await session.scalars(
            select(AuditEntry.actor).where(
                AuditEntry.entity_id == conversation, AuditEntry.action == "reply"
            )
        )
    assert delivered is not None
    assert delivered.status == "sent"
    assert delivered.details["staff"] == actor
    assert actor in page  # who wrote it is shown beside it
    assert mode == "human"  # replying took the conversation over
    page = await editor.page(f"/admin/conversations/{conversation}")
    assert f'data-testid="status-{staff.id}">đã gửi<' in page
    assert await audit_actions(sessionmaker, conversation) == ["take_over", "reply"]


async def test_hand_back_lets_the_bot_answer_again(
    editor: AdminBrowser,
    worker: Worker,
    telegram: FakeTelegramApi,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    chat = chat_id()
    conversation = await ask(sessionmaker, chat, "Xin chào")
    await worker.drain()
    await editor.post(f"/admin/conversations/{conversation}/take-over")
    await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()
    before = len(sent_texts(telegram, chat))

    response = await editor.post(f"/admin/conversations/{conversation}/hand-back")
    assert response.headers["Location"] == f"/admin/conversations/{conversation}?msg=handed_back"
    await ask(sessionmaker, chat, FAQ_QUESTION)
    await worker.drain()
    rows = await thread(sessionmaker, conversation)
    assert [(m.author, m.status) for m in rows[-2:]] == [("user", "answered"), ("bot", "sent")]
    assert rows[-1].tier == "faq"
    assert len(sent_texts(telegram, chat)) == before + 1
    assert "SHT" in sent_texts(telegram, chat)[-1]
    assert await audit_actions(sessionmaker, conversation) == ["take_over", "hand_back"]


async def test_actions_need_an_editor_and_the_csrf_token(
    viewer: AdminBrowser, editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), FAQ_QUESTION)
    page = await viewer.page(f"/admin/conversations/{conversation}")
    assert "conv-take-over" not in page
    assert "conv-reply-form" not in page
    for action, form in (("take-over", {}), ("reply", {"text": "x"}), ("hand-back", {})):
        path = f"/admin/conversations/{conversation}/{action}"
        assert (await viewer.post(path, form)).status == 403
        assert (await editor.post(path, form, csrf="")).status == 403
    assert [m.author for m in await thread(sessionmaker, conversation)] == ["user"]
    assert await audit_actions(sessionmaker, conversation) == []
    assert (await editor.post("/admin/conversations/999999999/take-over")).status == 404


async def test_an_empty_or_too_long_reply_is_refused_with_a_message(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conversation = await ask(sessionmaker, chat_id(), FAQ_QUESTION)
    empty = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": "  "})
    assert empty.status == 400
    assert "Tin nhắn trống." in await empty.text()
    long = await editor.post(f"/admin/conversations/{conversation}/reply", {"text": "a" * 4001})
    assert long.status == 400
    assert [m.author for m in await thread(sessionmaker, conversation)] == ["user"]


async def history(b: AdminBrowser, visitor: str) -> dict[str, Any]:
    async with b.http.get(b.url("/api/chat/history"), headers={"X-Visitor-Id": visitor}) as r:
        assert r.status == 200
        body: dict[str, Any] = json.loads(await r.text())
        return body


async def test_the_web_chat_history_says_when_staff_have_the_conversation(
    editor: AdminBrowser, worker: Worker, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    visitor = f"visitor-{uuid.uuid4().hex[:12]}"
    conversation = await ask(sessionmaker, visitor, FAQ_QUESTION, channel="web")
    assert (await history(editor, visitor))["human"] is False
    await editor.post(f"/admin/conversations/{conversation}/take-over")
    assert (await history(editor, visitor))["human"] is True  # the page polls while this holds

    await editor.post(f"/admin/conversations/{conversation}/reply", {"text": STAFF_TEXT})
    await worker.drain()  # a web reply is marked sent: the browser reads it from the store
    body = await history(editor, visitor)
    assert body["messages"][-1]["author"] == "staff"
    assert body["messages"][-1]["text"] == STAFF_TEXT

    await editor.post(f"/admin/conversations/{conversation}/hand-back")
    assert (await history(editor, visitor))["human"] is False
    assert (await history(editor, "never-seen-visitor"))["human"] is False
