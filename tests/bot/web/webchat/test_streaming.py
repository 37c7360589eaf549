"""The web chat over real HTTP on 127.0.0.1: the answer stream, and an LLM's reply streamed
as tokens, replaced when it cites no known source or breaks off (the fake LLM on loopback)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer import replies
from bot.answer.answerer import Answerer
from bot.answer.stream import StreamDone
from bot.runtime import Runtime
from tests.bot.web._webchat import FAQ_QUESTION, Event, chat_body
from tests.bot.web.webchat._support import (
    DOCS_QUESTION,
    DORM_QUESTION,
    Client,
    make_app,
    post_chat,
    stored,
)
from tests.fakes.openai_stub import OpenAIStub


async def test_answer_stream_without_llm_is_one_done_equal_to_answer(answerer: Answerer) -> None:
    for question in (FAQ_QUESTION, DOCS_QUESTION, "Thời tiết ở Đà Lạt thế nào?"):
        events = [e async for e in answerer.answer_stream(question)]
        [done] = events
        assert isinstance(done, StreamDone)
        expected = await answerer.answer(question)
        assert (done.answer.tier, done.answer.answer) == (expected.tier, expected.answer)
        assert done.answer.citations == expected.citations
        assert done.answer.timings_ms["total"] > 0


@pytest.fixture
async def llm_client(llm_runtime: Runtime, serve: Callable[..., Any]) -> Client:
    started: Client = await serve(make_app(llm_runtime))
    return started


async def test_llm_reply_streams_as_tokens_then_done_as_answer_formats_it(
    llm_client: Client,
    llm_runtime: Runtime,
    stub: OpenAIStub,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    reply = "Bạn đăng ký ở ký túc xá trực tuyến theo các bước trong tài liệu [1]."
    stub.script_chat(reply)
    body = chat_body(DORM_QUESTION)
    _, events = await post_chat(llm_client, body)
    assert events[0] == Event("meta", {"tier": "documents"})
    tokens = [e.data["text"] for e in events if e.name == "token"]
    assert len(tokens) > 5
    assert "".join(tokens) == reply
    assert [e.name for e in events[1:]] == ["token"] * len(tokens) + ["done"]
    assert stub.requests_to("/v1/chat/completions")[0].body["stream"] is True

    stub.script_chat(reply)
    expected = await llm_runtime.answerer.answer(DORM_QUESTION)
    done = events[-1].data
    assert done["tier"] == "documents"
    assert done["answer"] == expected.answer
    assert done["answer"].startswith(reply)
    assert llm_runtime.settings.answer.disclaimer_docs_vi in done["answer"]
    assert [c["n"] for c in done["citations"]] == [1]
    _, [stored_reply] = await stored(sessionmaker, body["message_id"])
    assert stored_reply.text == done["answer"]
    assert stored_reply.details["streamed"] is True


async def test_llm_reply_citing_an_unknown_source_is_replaced_by_the_fallback(
    llm_client: Client,
    llm_runtime: Runtime,
    stub: OpenAIStub,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    bogus = "Phí ký túc xá là 999.000 đồng [9]."
    fallback = "Mình không chắc, bạn hãy hỏi phòng tuyển sinh."
    stub.script_chat(bogus)
    stub.script_chat(fallback)
    body = chat_body(DORM_QUESTION)
    _, events = await post_chat(llm_client, body)
    names = [e.name for e in events]
    assert names[0] == "meta"
    assert names[-2:] == ["replace", "done"]
    assert "".join(e.data["text"] for e in events if e.name == "token") == bogus

    stub.script_chat(bogus)
    stub.script_chat(fallback)
    expected = await llm_runtime.answerer.answer(DORM_QUESTION)
    done = events[-1].data
    assert expected.tier == "fallback"
    assert (done["tier"], done["answer"]) == (expected.tier, expected.answer)
    assert "999.000" not in done["answer"]
    _, [stored_reply] = await stored(sessionmaker, body["message_id"])
    assert stored_reply.text == done["answer"]
    assert "999.000" not in stored_reply.text


async def test_llm_stream_breaking_off_is_replaced_by_the_extractive_answer(
    llm_client: Client, stub: OpenAIStub
) -> None:
    stub.script_chat("Bạn đăng ký ở ký túc xá trực tuyến theo tài liệu [1].", stream_error_after=2)
    _, events = await post_chat(llm_client, chat_body(DORM_QUESTION))
    assert [e.name for e in events] == ["meta", "token", "token", "replace", "done"]
    done = events[-1].data
    assert done["tier"] == "documents"
    assert done["answer"].startswith(replies.extractive_intro("vi"))


async def test_llm_down_before_any_token_answers_extractively_without_replace(
    llm_client: Client, stub: OpenAIStub
) -> None:
    stub.fail(500)
    _, events = await post_chat(llm_client, chat_body(DORM_QUESTION))
    assert [e.name for e in events] == ["meta", "done"]
    assert events[-1].data["answer"].startswith(replies.extractive_intro("vi"))


async def test_visitor_leaving_mid_stream_still_gets_the_stored_answer_on_retry(
    committing: Callable[[Runtime], Runtime],
    llm_runtime: Runtime,
    stub: OpenAIStub,
    serve: Callable[..., Any],
) -> None:
    real = committing(llm_runtime)
    client = await serve(make_app(real))
    reply = "Bạn đăng ký ở ký túc xá trực tuyến theo các bước trong tài liệu [1]. " * 20
    stub.script_chat(reply)
    body = chat_body(DORM_QUESTION)
    response = await client.post("/api/chat", json=body)
    assert b"event: token" in await response.content.readuntil(b"event: token")
    response.close()  # the tab was closed mid-answer

    for _ in range(100):
        _, answers = await stored(real.sessionmaker, body["message_id"])
        if answers:
            break
        await asyncio.sleep(0.1)
    [answer] = answers
    assert answer.text.startswith(reply.strip())
    _, [done] = await post_chat(client, body)
    assert done.data["answer"] == answer.text
    assert len(stub.requests_to("/v1/chat/completions")) == 1
