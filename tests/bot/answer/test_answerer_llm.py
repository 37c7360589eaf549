"""Tier 2 and the fallback with an LLM: a fake OpenAI-compatible server on 127.0.0.1 stands in
for the model (no model is reachable here); everything else is real."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.llm.client import LlmClient
from tests.fakes.openai_stub import OpenAIStub

DOC_QUESTION = "Đăng ký ở ký túc xá cần làm những bước nào?"
OFF_TOPIC = "Thời tiết ở Đà Lạt cuối tuần này thế nào?"


@pytest.fixture
async def llm_answerer(
    stub: OpenAIStub,
    parts: AnswererParts,
    sessionmaker: async_sessionmaker[AsyncSession],
    demo_kb: object,
) -> AsyncIterator[Answerer]:
    llm_settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("sk-test-secret"), "model": "m"}
    )
    settings = parts.settings.model_copy(update={"llm": llm_settings})
    client = LlmClient(llm_settings, max_retries=0)
    try:
        yield Answerer(replace(parts, settings=settings, llm=client), sessionmaker)
    finally:
        await client.aclose()


def user_message(request_body: dict[str, Any]) -> str:
    return str(request_body["messages"][-1]["content"])


async def test_llm_answer_with_valid_citations_is_used(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    stub.script_chat("Bạn đăng ký ở ký túc xá trực tuyến theo các bước trong tài liệu [1].")
    result = await llm_answerer.answer(DOC_QUESTION)
    assert result.tier == "documents"
    assert result.answer.startswith("Bạn đăng ký ở ký túc xá trực tuyến")
    assert [c.n for c in result.citations] == [1]
    assert llm_answerer.settings.answer.disclaimer_docs_vi in result.answer
    [request] = stub.requests_to("/v1/chat/completions")
    assert request.headers["Authorization"] == "Bearer sk-test-secret"
    sent = user_message(request.body)
    assert "[1]" in sent
    assert DOC_QUESTION in sent
    assert "ký túc xá" in sent.lower()


async def test_llm_answer_citing_an_unknown_source_falls_through(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    stub.script_chat("Phí ký túc xá là 999.000 đồng [9].")  # there is no source 9
    stub.script_chat("Mình không chắc, bạn hãy hỏi phòng tuyển sinh.")  # the fallback's reply
    result = await llm_answerer.answer(DOC_QUESTION)
    assert result.tier == "fallback"
    assert "999.000" not in result.answer
    assert llm_answerer.settings.answer.disclaimer_llm_vi in result.answer
    assert llm_answerer.settings.contact.phone in result.answer


async def test_llm_answer_without_citations_falls_through(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    stub.script_chat("Ký túc xá rất đẹp.")
    stub.script_chat("Bạn hãy liên hệ phòng tuyển sinh.")
    result = await llm_answerer.answer(DOC_QUESTION)
    assert result.tier == "fallback"


async def test_no_answer_token_falls_through_to_the_fallback(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    stub.script_chat("NO_ANSWER")
    stub.script_chat("Câu hỏi này nằm ngoài tài liệu.")
    result = await llm_answerer.answer(DOC_QUESTION)
    assert result.tier == "fallback"
    assert result.answer.startswith("Câu hỏi này nằm ngoài tài liệu.")


async def test_llm_fallback_carries_the_disclaimer(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    stub.script_chat("I can only help with admission questions.")
    result = await llm_answerer.answer("What is the weather like in Paris today?")
    assert result.tier == "fallback"
    assert llm_answerer.settings.answer.disclaimer_llm_en in result.answer
    [request] = stub.requests_to("/v1/chat/completions")
    assert "Sources:" not in user_message(request.body)  # no documents were given


async def test_faq_answers_never_go_through_the_llm(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    result = await llm_answerer.answer("Chỉ tiêu ngành Khoa học Máy tính năm 2026 là bao nhiêu?")
    assert result.tier == "faq"
    assert stub.requests_to("/v1/chat/completions") == []


async def test_a_score_check_is_answered_from_the_tables_not_the_llm(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    result = await llm_answerer.answer("25 diem thpt co do khmt k")
    assert result.why.get("facts") == "score check"
    assert "26,85" in result.answer
    assert stub.requests_to("/v1/chat/completions") == []


async def test_failing_llm_degrades_to_extractive_answer(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    stub.fail(500, times=2)
    result = await llm_answerer.answer(DOC_QUESTION)
    assert result.tier == "documents"
    assert "sk-test-secret" not in result.answer
    assert result.reason.endswith("extractive")


async def test_failing_llm_in_the_fallback_gives_the_contact_reply(
    llm_answerer: Answerer, stub: OpenAIStub
) -> None:
    stub.fail(503, times=2)
    result = await llm_answerer.answer(OFF_TOPIC)
    assert result.tier == "fallback"
    assert llm_answerer.settings.contact.phone in result.answer
    assert llm_answerer.settings.answer.disclaimer_llm_vi not in result.answer
