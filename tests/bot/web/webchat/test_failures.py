"""The web chat over real HTTP on 127.0.0.1: the answerer failing, or the database down."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer import replies
from bot.answer.stream import StreamEvent, StreamToken
from bot.conversations.store import upsert_conversation
from bot.db.models import MessageStatus
from bot.runtime import Runtime
from tests.bot.web._webchat import FAQ_QUESTION, chat_body
from tests.bot.web.webchat._support import (
    DOCS_QUESTION,
    Client,
    error_of,
    get_history,
    post_chat,
    stored,
)


async def test_an_answerer_failure_becomes_a_polite_reply(
    client: Client,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    sessionmaker: async_sessionmaker[AsyncSession],
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(question: str) -> AsyncIterator[StreamEvent]:
        yield StreamToken("Học phí là ")
        raise RuntimeError("the database went away")

    monkeypatch.setattr(runtime.answerer, "answer_stream", broken)
    body = chat_body(DOCS_QUESTION)
    _, events = await post_chat(client, body)
    assert [e.name for e in events] == ["token", "replace", "done"]
    done = events[-1].data
    assert done["tier"] == "fallback"
    assert done["answer"] == replies.no_information_reply(runtime.settings.contact, "vi")
    assert "answering message" in caplog.text
    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.answered
    assert reply.text == done["answer"]
    assert reply.details["reason"] == "error while answering: RuntimeError"
    assert reply.details["why"] == {"error": "RuntimeError"}


async def test_database_down_is_a_503_to_retry(
    client: Client,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def down(*args: object, **kwargs: object) -> None:
        raise OperationalError("INSERT", {}, ConnectionRefusedError("connection refused"))

    monkeypatch.setattr("bot.web.webchat.answering.record_inbound", down)
    monkeypatch.setattr("bot.web.webchat.handlers.history", down)
    response = await client.post("/api/chat", json=chat_body(FAQ_QUESTION))
    assert response.status == 503
    assert response.headers["Retry-After"] == "5"
    assert "unavailable" in await error_of(response)
    response = await get_history(client, "visitor-1")
    assert response.status == 200  # a new visitor: no conversation, no history query
    async with runtime.sessionmaker.begin() as session:
        await upsert_conversation(session, "web", "visitor-1")
    response = await get_history(client, "visitor-1")
    assert response.status == 503
    assert "cannot record message" in caplog.text
