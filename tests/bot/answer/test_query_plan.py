"""LLM query enhancement (TUVAN_ANSWER__QUERY_EXPANSION): one call plans the search, the
rankings are fused, small talk gets a polite reply; the OpenAI stub stands in for the model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.query_plan import PlannedSearch, QueryPlan, parse_plan, search_plan
from bot.core.settings import LlmSettings
from bot.llm.client import LlmClient, load_prompt
from retrieval.search.fusion import rrf
from retrieval.search.hits import Hit
from retrieval.search.hybrid import search_chunks
from tests.fakes.openai_stub import OpenAIStub

PLAN_PROMPT = load_prompt(LlmSettings(), "query_plan")
# Its own words rank the scholarships first; the planned queries raise the tuition document.
QUESTION = "tiền học 1 năm nhiêu"
QUERIES = ["Học phí một năm học là bao nhiêu", "học phí năm học", "học phí"]
CITED = "Mức học phí một năm được nêu trong tài liệu [1]."


def plan_json(**data: object) -> str:
    return json.dumps(data, ensure_ascii=False)


@pytest.fixture
async def planning(
    stub: OpenAIStub,
    parts: AnswererParts,
    sessionmaker: async_sessionmaker[AsyncSession],
    demo_kb: object,
) -> AsyncIterator[Answerer]:
    llm_settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("sk-test"), "model": "m"}
    )
    answer = parts.settings.answer.model_copy(update={"query_expansion": True})
    settings = parts.settings.model_copy(update={"llm": llm_settings, "answer": answer})
    client = LlmClient(llm_settings, max_retries=0)
    try:
        yield Answerer(replace(parts, settings=settings, llm=client), sessionmaker)
    finally:
        await client.aclose()


def plan_requests(stub: OpenAIStub) -> list[str]:
    """The user message of every planning call made."""
    return [
        r.body["messages"][-1]["content"]
        for r in stub.requests_to("/v1/chat/completions")
        if r.body["messages"][0]["content"] == PLAN_PROMPT
    ]


# -- the reply --------------------------------------------------------------------------------


def test_a_plan_reply_is_read_leniently_and_capped() -> None:
    fenced = '```json\n{"retrieve": true, "queries": ["a b", " a  b ", "q", "c", "d"]}\n```'
    assert parse_plan(fenced, "q") == QueryPlan(retrieve=True, queries=("a b", "c", "d"))
    assert parse_plan(plan_json(retrieve=True, queries=["x" * 400, 7]), "q").queries == ()
    assert parse_plan(plan_json(retrieve=False, kind="thanks"), "cảm ơn ad nhiều") == QueryPlan(
        retrieve=False, kind="thanks"
    )


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("Sure! Here are some queries: ...", "học phí?"),
        ('{"retrieve": false, "kind": "weather"}', "chào"),  # not a kind we answer
        # a real question the model calls small talk still gets its search
        (
            '{"retrieve": false, "kind": "greeting"}',
            "chào ad, học phí ngành CNTT năm 2026 là bao nhiêu ạ",
        ),
        ("[1, 2]", "học phí?"),
    ],
)
def test_an_unusable_plan_is_the_plain_question(reply: str, question: str) -> None:
    assert parse_plan(reply, question) == QueryPlan.plain()


# -- in the answerer --------------------------------------------------------------------------


async def test_expansion_makes_one_call_and_fuses_the_rankings(
    planning: Answerer, stub: OpenAIStub, session: AsyncSession, parts: AnswererParts
) -> None:
    stub.script_chat(plan_json(retrieve=True, queries=QUERIES))
    stub.script_chat(CITED)  # tier 2 composes with the same LLM
    answer = await planning.answer(QUESTION)
    assert plan_requests(stub) == [QUESTION]
    assert len(stub.requests_to("/v1/chat/completions")) == 2
    assert answer.tier == "documents", answer.reason
    assert "plan" in answer.timings_ms

    # the fusion itself: the question's ranking and each query's, by RRF
    how = PlannedSearch(parts.embedder, parts.processor, parts.settings.search)
    [vector] = await asyncio.to_thread(
        parts.embedder.embed_queries, [parts.processor.expand_query(QUESTION)]
    )
    terms = parts.processor.query_terms(QUESTION)
    plain = await search_chunks(
        session, vector, terms, parts.settings.search, limit=10, query_text=QUESTION
    )
    fused = await search_plan(
        session, how, QueryPlan(True, tuple(QUERIES)), QUESTION, vector, terms, limit=10
    )
    assert plain[0].source.endswith("hoc-bong.md")

    def tuition_at(hits: list[Hit]) -> int:
        return next(i for i, h in enumerate(hits) if h.source.endswith("hoc-phi-2026.md"))

    assert tuition_at(fused) < tuition_at(plain)
    assert answer.citations[0].chunk_id == fused[0].chunk_id  # [1] is the fused first passage
    rankings = [[h.chunk_id for h in plain]]
    for query in QUERIES:
        [v] = await asyncio.to_thread(
            parts.embedder.embed_queries, [parts.processor.expand_query(query)]
        )
        hits = await search_chunks(
            session,
            v,
            parts.processor.query_terms(query),
            parts.settings.search,
            limit=10,
            query_text=query,
        )
        rankings.append([h.chunk_id for h in hits])
    expected = rrf(rankings, parts.settings.search.rrf_k)
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    for h in fused:
        assert h.score == pytest.approx(expected[h.chunk_id])
    similarity = {h.chunk_id: h.similarity for h in plain}
    for h in fused:  # t_doc is still held to the question's own cosine
        if h.chunk_id in similarity:
            assert h.similarity == pytest.approx(similarity[h.chunk_id])


async def test_a_greeting_gets_a_polite_reply_without_search_or_citation(
    planning: Answerer, stub: OpenAIStub
) -> None:
    # A plain greeting is read without the LLM (bot.answer.small_talk): no call at all.
    plain = await planning.answer("chào ad ạ")
    assert plain.reason == "no search needed: greeting (small talk)"
    assert stub.requests_to("/v1/chat/completions") == []
    # One the rules do not know is the query plan's to read.
    stub.script_chat(plan_json(retrieve=False, kind="greeting"))
    answer = await planning.answer("chúc ad buổi sáng tốt lành")
    assert len(stub.requests_to("/v1/chat/completions")) == 1
    assert answer.tier == "fallback"
    assert answer.citations == []
    assert answer.chunk_ids == []
    assert "query plan" in answer.reason
    assert answer.answer.startswith("Chào bạn!")
    assert "search" not in answer.timings_ms


async def test_the_faq_is_tried_first_on_the_question_itself(
    planning: Answerer, stub: OpenAIStub
) -> None:
    answer = await planning.answer("Học phí chương trình chuẩn năm học 2026–2027 là bao nhiêu?")
    assert answer.tier == "faq"
    assert stub.requests_to("/v1/chat/completions") == []


async def test_a_failing_plan_falls_back_to_the_plain_question(
    planning: Answerer, stub: OpenAIStub
) -> None:
    stub.fail(500)
    stub.script_chat(CITED)
    answer = await planning.answer("Đăng ký ở ký túc xá cần làm những bước nào?")
    assert plan_requests(stub) == ["Đăng ký ở ký túc xá cần làm những bước nào?"]
    assert answer.tier == "documents", answer.reason
    assert "ky-tuc-xa.md" in answer.citations[0].source
