"""Chat openers on the channels (4/4, item 2): "ad ơi cho e hỏi" gets a short invitation, not the
apology, and the message after it is answered as a question asked alone, on the web chat (over
real HTTP on 127.0.0.1) and on Telegram (webhook in, the real worker, the fake Bot API out)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db.models import Message
from tests.bot.web._support import (
    ServeWebChat,
    Stack,
    chat_id,
    post_telegram,
    runtime_with,
    telegram_update,
)
from tests.bot.web._webchat import ROOMY, chat_body, parse_sse

pytestmark = pytest.mark.usefixtures("demo_kb")

Client = TestClient[web.Request, web.Application]
BEFORE = "Điểm chuẩn ngành KHMT năm 2025?"
# Right after BEFORE it would take its major ("học phí bao nhiêu KHMT"); after an opener, never.
QUESTION = "học phí bao nhiêu"
APOLOGY = "Xin lỗi, mình chưa có thông tin"


async def ask(client: Client, visitor: str, text_: str) -> tuple[str, str]:
    """The message id and the answer of one question sent from the chat page."""
    body = chat_body(text_, visitor=visitor)
    response = await client.post("/api/chat", json=body)
    assert response.status == 200, await response.text()
    events = parse_sse(await response.text())
    assert events[-1].name == "done"
    return body["message_id"], str(events[-1].data["answer"])


async def reading_of(sm: async_sessionmaker[AsyncSession], event_id: str) -> dict[str, Any]:
    """The stored reading of the bot's reply to the web message ``event_id``."""
    async with sm() as session:
        inbound = await session.scalar(select(Message).where(Message.event_id == event_id))
        assert inbound is not None
        reply = await session.scalar(select(Message).where(Message.reply_to_id == inbound.id))
    assert reply is not None
    assert reply.details is not None
    return dict(reply.details["reading"])


async def test_after_an_opener_the_web_chat_answers_the_next_message_alone(
    settings: Settings,
    engine: AsyncEngine,
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    answerer: Answerer,
    serve_webchat: ServeWebChat,
) -> None:
    client, _ = await serve_webchat(
        runtime_with(settings, engine, sessionmaker, parts, answerer, **ROOMY)
    )
    visitor = f"opener-{uuid.uuid4().hex[:8]}"
    await ask(client, visitor, BEFORE)
    _, invitation = await ask(client, visitor, "ad ơi cho e hỏi")
    assert invitation.startswith("Chào bạn, bạn cứ hỏi nhé")
    assert APOLOGY not in invitation
    assert len(invitation) < 80
    message_id, answer = await ask(client, visitor, QUESTION)
    reading = await reading_of(sessionmaker, message_id)
    assert (reading["mode"], reading["stopped"], reading["asked"]) == (
        "alone",
        "small_talk",
        QUESTION,
    )
    _, asked_alone = await ask(client, f"alone-{uuid.uuid4().hex[:8]}", QUESTION)
    assert answer == asked_alone


async def sent_texts(stack: Stack, chat: int) -> list[str]:
    return [
        str(c.body["text"])
        for c in stack.telegram.calls_to("sendMessage")
        if c.body["chat_id"] == chat
    ]


async def stored_readings(stack: Stack, chat: int) -> list[dict[str, Any] | None]:
    """The readings stored with the bot's replies in this Telegram chat, in order."""
    async with stack.sm() as session:
        rows = await session.execute(
            text(
                "SELECT m.details -> 'reading' FROM messages m "
                "JOIN conversations c ON c.id = m.conversation_id "
                "JOIN contacts k ON k.id = c.contact_id "
                "WHERE k.external_id = :u AND m.direction = 'out' ORDER BY m.id"
            ),
            {"u": str(chat)},
        )
        return [r for (r,) in rows]


async def test_after_an_opener_telegram_answers_the_next_message_alone(stack: Stack) -> None:
    chat = chat_id()
    for n, message in enumerate((BEFORE, "cho e hoi", QUESTION)):
        assert await post_telegram(stack, telegram_update(chat + n, chat, message)) == 200
        await stack.worker.drain()
    _, invitation, answer = await sent_texts(stack, chat)
    assert invitation.startswith("Chào bạn, bạn cứ hỏi nhé")
    assert APOLOGY not in invitation
    assert len(invitation) < 80
    reading = (await stored_readings(stack, chat))[2]
    assert reading is not None
    assert (reading["mode"], reading["stopped"]) == ("alone", "small_talk")
    alone = chat_id()
    await post_telegram(stack, telegram_update(alone, alone, QUESTION))
    await stack.worker.drain()
    assert await sent_texts(stack, alone) == [answer]
