"""The web chat over real HTTP on 127.0.0.1: the conversation read back after a reload, by the
visitor id in a header, as plain text."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer import replies
from bot.db.models import Conversation
from bot.runtime import Runtime
from tests.bot.web._webchat import FAQ_QUESTION, chat_body
from tests.bot.web.webchat._support import (
    DOCS_QUESTION,
    Client,
    error_of,
    get_history,
    make_app,
    post_chat,
    stored,
    with_web,
)


async def test_history_after_a_reload_returns_the_conversation_in_order(client: Client) -> None:
    first = chat_body(FAQ_QUESTION, visitor="reloader")
    second = chat_body(DOCS_QUESTION, visitor="reloader")
    _, [a1] = await post_chat(client, first)
    _, [a2] = await post_chat(client, second)
    await post_chat(client, chat_body("Học phí?", visitor="someone-else"))

    response = await get_history(client, "reloader")
    assert response.status == 200
    assert response.headers["Cache-Control"] == "no-store"
    history = await response.json()
    messages = history["messages"]
    assert [(m["author"], m["text"]) for m in messages] == [
        ("user", FAQ_QUESTION),
        ("bot", a1.data["answer"]),
        ("user", DOCS_QUESTION),
        ("bot", a2.data["answer"]),
    ]
    assert messages[0]["message_id"] == first["message_id"]
    assert [m["tier"] for m in messages] == [None, "faq", None, "documents"]
    assert messages[3]["citations"] == a2.data["citations"]
    times = [datetime.fromisoformat(m["created_at"]) for m in messages]
    assert all(t.tzinfo is not None for t in times)
    assert times == sorted(times)


async def test_history_keeps_the_last_messages_only(
    runtime: Runtime, serve: Callable[..., Any]
) -> None:
    short = replace(runtime, settings=with_web(runtime.settings, history_messages=3))
    client = await serve(make_app(short))
    await post_chat(client, chat_body(FAQ_QUESTION, visitor="v3"))
    await post_chat(client, chat_body(DOCS_QUESTION, visitor="v3"))
    response = await get_history(client, "v3")
    messages = (await response.json())["messages"]
    assert [m["author"] for m in messages] == ["bot", "user", "bot"]
    assert messages[1]["text"] == DOCS_QUESTION


async def test_a_follow_up_in_the_web_chat_is_read_with_the_earlier_question(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    visitor = f"follow-{uuid.uuid4().hex[:8]}"
    await post_chat(client, chat_body("ngành kỹ thuật phần mềm xét tổ hợp nào", visitor=visitor))
    body = chat_body("ngành đó học phí bao nhiêu", visitor=visitor)
    _, events = await post_chat(client, body)
    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.question == "ngành kỹ thuật phần mềm học phí bao nhiêu"
    assert reply.tier in {"faq", "documents"}
    assert "32.500.000" in events[-1].data["answer"]


async def test_asking_for_a_person_in_the_web_chat_marks_the_conversation_waiting(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body("cho em gặp tư vấn viên với ạ", visitor=f"person-{uuid.uuid4().hex[:8]}")
    _, events = await post_chat(client, body)
    assert "giờ hành chính" in events[-1].data["answer"]
    inbound, _ = await stored(sessionmaker, body["message_id"])
    async with sessionmaker() as session:
        conversation = await session.get(Conversation, inbound.conversation_id)
    assert conversation is not None
    assert conversation.waiting_since is not None


async def test_history_of_a_new_visitor_is_empty(client: Client) -> None:
    response = await get_history(client, "never-seen")
    assert response.status == 200
    assert await response.json() == {
        "expired": False,
        "visitor_days": 30,
        "human": False,
        "messages": [],
    }


@pytest.mark.parametrize("visitor", ["", "a b", "x" * 101, "é", "retired:12"])
async def test_history_with_a_bad_visitor_id_is_a_400(client: Client, visitor: str) -> None:
    headers = {"X-Visitor-Id": visitor} if visitor else {}
    response = await client.get("/api/chat/history", headers=headers)
    assert response.status == 400
    assert "X-Visitor-Id" in await error_of(response)
    assert "visitor_id must be" in await error_of(response)


async def test_history_no_longer_takes_the_visitor_id_from_the_url(client: Client) -> None:
    await post_chat(client, chat_body(FAQ_QUESTION, visitor="in-the-url"))
    response = await client.get("/api/chat/history", params={"visitor_id": "in-the-url"})
    assert response.status == 400
    assert "X-Visitor-Id header" in await error_of(response)
    # ... not even beside the header: a URL holding the id is refused, whatever else it has
    response = await client.get(
        "/api/chat/history",
        params={"visitor_id": "in-the-url"},
        headers={"X-Visitor-Id": "in-the-url"},
    )
    assert response.status == 400
    by_header = await (await get_history(client, "in-the-url")).json()
    assert next(m["text"] for m in by_header["messages"]) == FAQ_QUESTION


async def test_markup_in_a_question_comes_back_as_plain_text(client: Client) -> None:
    text = '<script>alert("x")</script><img src=x onerror=alert(1)> học phí?'
    _, [done] = await post_chat(client, chat_body(text, visitor="markup"))
    assert done.data["tier"] in ("faq", "documents", "fallback")
    history = await get_history(client, "markup")
    raw = await history.text()
    assert '<script>alert(\\"x\\")</script><img src=x onerror=alert(1)>' in raw  # JSON, as is
    assert (await history.json())["messages"][0]["text"] == text
    assert history.content_type == "application/json"


async def test_not_a_question_is_answered_politely(client: Client) -> None:
    _, [done] = await post_chat(client, chat_body("👍👍"))
    assert done.data["tier"] == "fallback"
    assert done.data["answer"] == replies.not_a_question_reply("vi")
