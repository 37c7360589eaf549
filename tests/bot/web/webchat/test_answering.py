"""The web chat over real HTTP on 127.0.0.1: questions answered as server-sent events and
stored, once per message id, also when requests overlap."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.store import record_inbound, set_mode, upsert_conversation
from bot.core.clock import utcnow
from bot.core.messages import InboundMessage
from bot.db.models import Author, ConversationMode, Direction, Message, MessageStatus
from bot.runtime import Runtime
from tests.bot.web._webchat import FAQ_QUESTION, chat_body
from tests.bot.web.webchat._support import (
    DOCS_QUESTION,
    DORM_QUESTION,
    FAQ,
    SITE,
    Client,
    error_of,
    make_app,
    post_chat,
    stored,
    with_web,
)
from tests.fakes.openai_stub import OpenAIStub


async def test_faq_answer_arrives_as_one_done_event_and_is_stored(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION)
    response, events = await post_chat(client, body)
    assert "Access-Control-Allow-Origin" not in response.headers  # same-origin request
    [done] = events
    assert done.data["tier"] == "faq"
    assert done.data["answer"].startswith(FAQ["shut-faq02"]["answer"] + "\n\nNguồn:\n[1] ")
    assert done.data["message_id"] == body["message_id"]
    assert done.data["handover"] is False
    # The entry names "nganh-dao-tao-2026.md": the student gets that document's title and
    # address, as a documents answer cites it, and never the file's name.
    assert done.data["citations"] == [
        {
            "n": 1,
            "title": "Danh sách ngành đào tạo và chỉ tiêu tuyển sinh năm 2026",
            "url": f"{SITE}/nganh-dao-tao-2026",
            "page": None,
        }
    ]
    assert FAQ["shut-faq02"]["source"] not in json.dumps(done.data, ensure_ascii=False)

    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.direction == Direction.inbound
    assert inbound.author == Author.user
    assert inbound.text == FAQ_QUESTION
    assert inbound.status == MessageStatus.answered
    assert inbound.done_at is not None
    assert inbound.attempts == 1
    assert reply.id == done.data["reply_id"]
    assert reply.direction == Direction.outbound
    assert reply.author == Author.bot
    assert reply.status == MessageStatus.sent
    assert reply.conversation_id == inbound.conversation_id
    assert reply.text == done.data["answer"]
    assert reply.tier == "faq"
    assert reply.citations[0]["source"].endswith("/" + FAQ["shut-faq02"]["source"])
    assert reply.details["faq_external_id"] == "shut-faq02"
    assert reply.details["timings_ms"]["total"] > 0


async def test_documents_answer_carries_tier_and_citations(
    client: Client, runtime: Runtime, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(DOCS_QUESTION)
    _, [done] = await post_chat(client, body)
    assert done.data["tier"] == "documents"
    assert "150" in done.data["answer"]
    assert runtime.settings.answer.disclaimer_docs_vi in done.data["answer"]
    citations = done.data["citations"]
    assert citations
    assert set(citations[0]) == {"n", "title", "url", "page"}
    _, [reply] = await stored(sessionmaker, body["message_id"])
    assert reply.tier == "documents"
    assert [c["n"] for c in reply.citations] == [c["n"] for c in citations]


async def test_same_message_id_twice_is_answered_once(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION)
    _, [first] = await post_chat(client, body)
    _, [again] = await post_chat(client, body)
    assert again.data == first.data
    _, answers = await stored(sessionmaker, body["message_id"])
    assert len(answers) == 1


async def test_concurrent_posts_of_one_message_store_one_answer(
    committing: Callable[[Runtime], Runtime],
    llm_runtime: Runtime,
    stub: OpenAIStub,
    serve: Callable[..., Any],
) -> None:
    real = committing(llm_runtime)
    client = await serve(make_app(real))
    # A slow model: the second request arrives while the first is still answering.
    stub.script_chat("Bạn đăng ký ở ký túc xá trực tuyến theo tài liệu [1].", delay_s=0.5)
    body = chat_body(DORM_QUESTION, visitor=f"race-{uuid.uuid4().hex}")
    (_, first), (_, second) = await asyncio.gather(post_chat(client, body), post_chat(client, body))
    assert first[-1].data == second[-1].data
    assert first[-1].data["reply_id"] is not None
    assert first[-1].data["tier"] == "documents"
    assert len(stub.requests_to("/v1/chat/completions")) == 1
    # One of them streamed the answer; the other waited and sent the stored reply alone.
    assert sorted([len(first), len(second)])[0] == 1
    inbound, answers = await stored(real.sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.answered
    assert [a.id for a in answers] == [first[-1].data["reply_id"]]


async def test_a_slow_answer_keeps_its_short_lease_and_is_paid_for_once(
    committing: Callable[[Runtime], Runtime],
    llm_runtime: Runtime,
    stub: OpenAIStub,
    serve: Callable[..., Any],
) -> None:
    # A one-second lease, renewed while the answer runs; the model takes 2.5 s.
    real = committing(llm_runtime)
    real = replace(real, settings=with_web(real.settings, answer_lease_s=1.0))
    client = await serve(make_app(real, duplicate_wait_s=10))
    stub.script_chat("Bạn đăng ký ở ký túc xá trực tuyến theo tài liệu [1].", delay_s=2.5)
    body = chat_body(DORM_QUESTION, visitor=f"lease-{uuid.uuid4().hex}")
    first = asyncio.create_task(post_chat(client, body))
    await asyncio.sleep(0.5)
    async with real.sessionmaker() as session:
        inbound = await session.scalar(
            select(Message).where(Message.event_id == body["message_id"])
        )
    assert inbound is not None
    assert inbound.lease_until is not None
    assert inbound.lease_until - utcnow() < timedelta(seconds=2)  # not the worker's 120 s
    await asyncio.sleep(1.5)  # past the first lease: a repeat must still not take it over
    (_, again), (_, answered) = await asyncio.gather(post_chat(client, body), first)
    assert again[-1].data == answered[-1].data
    assert len(stub.requests_to("/v1/chat/completions")) == 1


async def test_repeat_while_the_first_is_answering_waits_then_conflicts(
    runtime: Runtime, serve: Callable[..., Any], sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    client = await serve(make_app(runtime, duplicate_wait_s=0.3))
    body = chat_body(FAQ_QUESTION)
    await answering_elsewhere(sessionmaker, body, lease_until=utcnow() + timedelta(minutes=2))
    response = await client.post("/api/chat", json=body)
    assert response.status == 409
    assert response.headers["Retry-After"] == "2"
    assert "still being answered" in await error_of(response)


async def test_repeat_after_the_first_request_died_answers_it(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION)
    await answering_elsewhere(sessionmaker, body, lease_until=utcnow() - timedelta(seconds=1))
    _, [done] = await post_chat(client, body)
    assert done.data["tier"] == "faq"
    inbound, [reply] = await stored(sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.answered
    assert inbound.attempts == 2
    assert reply.id == done.data["reply_id"]


async def answering_elsewhere(
    sessionmaker: async_sessionmaker[AsyncSession], body: Any, *, lease_until: datetime
) -> None:
    """The state a request leaves while it answers (or after it died answering)."""
    async with sessionmaker.begin() as session:
        recorded = await record_inbound(
            session,
            InboundMessage(
                channel="web",
                event_id=body["message_id"],
                external_user_id=body["visitor_id"],
                kind="text",
                text=body["text"],
            ),
        )
        await session.execute(
            update(Message)
            .where(Message.id == recorded.message_id)
            .values(status=MessageStatus.answering, lease_until=lease_until, attempts=1)
        )


@pytest.mark.parametrize(
    "change", [{"visitor_id": "someone-else"}, {"text": "Học phí bao nhiêu?"}], ids=str
)
async def test_message_id_reused_for_another_message_is_a_409(
    client: Client, change: dict[str, str]
) -> None:
    body = chat_body(FAQ_QUESTION)
    await post_chat(client, body)
    response = await client.post("/api/chat", json={**body, **change})
    assert response.status == 409
    assert "already used" in await error_of(response)


async def test_conversation_taken_over_by_staff_gets_no_bot_reply(
    client: Client, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    body = chat_body(FAQ_QUESTION, visitor="handed-over")
    async with sessionmaker.begin() as session:
        conversation_id = await upsert_conversation(session, "web", "handed-over")
        await set_mode(session, conversation_id, ConversationMode.human)
    _, [done] = await post_chat(client, body)
    assert done.data["handover"] is True
    assert done.data["answer"] is None
    inbound, answers = await stored(sessionmaker, body["message_id"])
    assert inbound.status == MessageStatus.skipped
    assert answers == []
    _, [again] = await post_chat(client, body)
    assert again.data == done.data
