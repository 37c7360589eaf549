"""URAG-F (a): generated phrasings of published FAQ questions, with and without an LLM."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.parts import AnswererParts
from bot.db.models import FaqStatus, FaqVariant, VariantOrigin
from bot.knowledge.faq_paraphrases import (
    EnrichReport,
    FaqParaphraseJob,
    FaqParaphraseOptions,
    question_version,
    shorthand_variants,
)
from bot.llm.batch import BatchLimits
from bot.llm.client import LlmClient
from retrieval.faq.candidates import faq_candidates
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer
from tests.fakes.openai_stub import OpenAIStub

QUESTION = "Học phí ngành Khoa học Máy tính năm 2026 là bao nhiêu?"


def enrich(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    llm: LlmClient | None,
    *,
    dry_run: bool = False,
    concurrency: int = 4,
    attempts: int = 3,
    base_delay: float = 1.0,
    **options: Any,
) -> Awaitable[EnrichReport]:
    """The paraphrase job with ``options``: its plan (``dry_run``) or a run."""
    limits = BatchLimits(concurrency, attempts, base_delay)
    job = FaqParaphraseJob(sessionmaker, indexer, llm, FaqParaphraseOptions(**options), limits)
    return job.plan() if dry_run else job.run()


async def generated(session: AsyncSession, faq_id: int) -> list[str]:
    rows = await session.scalars(
        select(FaqVariant.text)
        .where(FaqVariant.faq_id == faq_id, FaqVariant.origin == VariantOrigin.generated)
        .order_by(FaqVariant.id)
    )
    return list(rows.all())


def test_shorthand_is_how_students_type_it(parts: AnswererParts) -> None:
    variants = shorthand_variants(QUESTION, parts.processor)
    assert variants[0] == "hp nganh khmt nam 2026 la bn"
    assert "ad oi hp nganh khmt nam 2026 la bn" in variants
    assert shorthand_variants("Is there a laundry?", parts.processor) == [
        "cho em hoi is there a laundry",
        "ad oi is there a laundry",
    ]


async def test_without_an_llm_published_entries_get_shorthand_variants(
    session: AsyncSession, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> None:
    published = await upsert_faq(session, indexer, FaqDraft(question=QUESTION, answer="32,5 tr"))
    draft = await upsert_faq(
        session,
        indexer,
        FaqDraft(question="Ký túc xá ở đâu?", answer="Khu B", status=FaqStatus.draft),
    )
    report = await enrich(sessionmaker, indexer, None)
    assert report.llm_calls == 0
    assert "hp nganh khmt nam 2026 la bn" in await generated(session, published.id)
    assert await generated(session, draft.id) == []  # drafts wait for staff
    # the shorthand now meets its entry, by its embedding (stored as a query, like a question)
    [vector] = await asyncio.to_thread(
        indexer.embedder.embed_queries, ["hp nganh khmt nam 2026 la bn"]
    )
    best = (await faq_candidates(session, indexer.processor, "", [], vector, limit=3))[0]
    assert (best.faq_id, best.matched_text) == (published.id, "hp nganh khmt nam 2026 la bn")
    assert best.similarity > 0.99
    again = await enrich(sessionmaker, indexer, None)  # resumable: done entries are skipped
    assert again.entries == 0
    assert again.skipped >= 1


def stub_llm(parts: AnswererParts, stub: OpenAIStub) -> LlmClient:
    return LlmClient(
        parts.settings.llm.model_copy(
            update={"base_url": stub.base_url, "api_key": SecretStr("sk-test"), "model": "m"}
        ),
        max_retries=0,
    )


def paraphrasing(question: str, phrasings: list[str]) -> Callable[[dict[str, Any]], str]:
    """A scripted reply: ``phrasings`` for ``question``, one filler phrasing for any other
    entry (calls run concurrently, so replies cannot be queued in entry order)."""

    def reply(body: dict[str, Any]) -> str:
        asked = body["messages"][1]["content"]
        return json.dumps(phrasings if asked == question else [f"{asked} nhé"])

    return reply


async def test_llm_paraphrases_are_stored_and_a_failure_falls_back_to_shorthand(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    stub: OpenAIStub,
    parts: AnswererParts,
) -> None:
    entry = await upsert_faq(session, indexer, FaqDraft(question=QUESTION, answer="32,5 tr"))
    llm = stub_llm(parts, stub)
    try:
        dry = await enrich(sessionmaker, indexer, llm, dry_run=True, force=True)
        assert stub.requests_to("/v1/chat/completions") == []
        assert dry.llm_calls == dry.entries == dry.estimate.calls >= 1
        assert dry.estimate.prompt_tokens > 0
        for _ in range(dry.entries):
            stub.script_chat(
                paraphrasing(QUESTION, ["hoc phi khmt 2026 bao nhieu", "KHMT 2026 học phí?"])
            )
        report = await enrich(sessionmaker, indexer, llm, n=5, force=True, concurrency=3)
        assert report.llm_calls == report.entries
        texts = await generated(session, entry.id)
        assert texts[:2] == ["hoc phi khmt 2026 bao nhieu", "KHMT 2026 học phí?"]
        assert "hp nganh khmt nam 2026 la bn" in texts
        asked = {r.body["messages"][1]["content"] for r in stub.requests_to("/v1/chat/completions")}
        assert QUESTION in asked
        stub.fail(500, times=2 * report.entries)
        failed = await enrich(sessionmaker, indexer, llm, force=True, attempts=2, base_delay=0.001)
        assert failed.failed
        assert failed.llm_calls == 2 * failed.entries  # each entry tried twice, then given up
        assert "hp nganh khmt nam 2026 la bn" in await generated(session, entry.id)
    finally:
        await llm.aclose()


async def test_variants_record_their_question_and_a_changed_question_is_redone(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    stub: OpenAIStub,
    parts: AnswererParts,
) -> None:
    draft = FaqDraft(question=QUESTION, answer="32,5 tr", external_id="hp-khmt")
    entry = await upsert_faq(session, indexer, draft)
    llm = stub_llm(parts, stub)
    try:
        stub.script_chat(json.dumps(["hoc phi khmt 2026"]))
        await enrich(sessionmaker, indexer, llm, entry_ids=(entry.id,))
        rows = (
            await session.execute(
                select(FaqVariant.source_version, FaqVariant.needs_review).where(
                    FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.generated
                )
            )
        ).all()
        assert rows
        assert set(rows) == {(question_version(QUESTION), False)}
        # Same question again: nothing to redo, and no LLM call.
        calls = len(stub.requests_to("/v1/chat/completions"))
        again = await enrich(sessionmaker, indexer, llm, entry_ids=(entry.id,))
        assert (again.entries, again.skipped) == (0, 1)
        assert len(stub.requests_to("/v1/chat/completions")) == calls

        new_question = "Học phí ngành Khoa học Máy tính năm 2027 là bao nhiêu?"
        await upsert_faq(session, indexer, FaqDraft(new_question, "35 tr", external_id="hp-khmt"))
        flagged = await session.scalars(
            select(FaqVariant.needs_review).where(
                FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.generated
            )
        )
        assert set(flagged.all()) == {True}
        stub.script_chat(json.dumps(["hoc phi khmt 2027"]))
        redone = await enrich(sessionmaker, indexer, llm, entry_ids=(entry.id,))
        assert redone.entries == 1
        texts = await generated(session, entry.id)
        assert "hoc phi khmt 2027" in texts
        assert "hoc phi khmt 2026" not in texts
        versions = await session.scalars(
            select(FaqVariant.source_version).where(
                FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.generated
            )
        )
        assert set(versions.all()) == {question_version(new_question)}
    finally:
        await llm.aclose()
