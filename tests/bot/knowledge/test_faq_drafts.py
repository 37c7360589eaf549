"""URAG-F (b)(c): FAQ drafts generated from chunks through the OpenAI stub, traced to their
source, silent in tier 1 until published, resumable, and robust to a failing endpoint."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.parts import AnswererParts
from bot.core.errors import LlmError
from bot.db.models import Chunk, Document, FaqEntry, FaqOrigin, FaqStatus, FaqVariant, VariantOrigin
from bot.knowledge.faq_drafts import (
    GENERATED_BY,
    FaqDraftJob,
    FaqDraftOptions,
    parse_pairs,
)
from bot.knowledge.faq_paraphrases import question_version
from bot.llm.batch import BatchLimits
from bot.llm.client import LlmClient
from retrieval.faq.candidates import faq_candidates
from retrieval.index.documents import index_document
from retrieval.index.indexer import Indexer
from retrieval.loading import load_file
from tests.fakes.openai_stub import OpenAIStub

FEES = (
    "# Học phí 2026\n\n"
    "Học phí ngành Khoa học Máy tính năm học 2025-2026 là 32.500.000 đồng một năm, "
    "đóng trước ngày 30/08/2025.\n"
)
FEE_Q = "Học phí ngành Khoa học Máy tính năm 2026 là bao nhiêu?"
FEE_A = "32.500.000 đồng một năm, đóng trước ngày 30/08/2025."
MADE_UP = {"question": "Học phí có tăng không?", "answer": "Mỗi năm tăng 10%."}


def llm_replies(stub: OpenAIStub, chunk_pairs: list[dict[str, str]]) -> None:
    """The stub's side of both prompts: ``chunk_pairs`` for a chunk, two phrasings for a
    question. Replies are computed from the request (calls run concurrently, so they cannot be
    queued in order) and read ``chunk_pairs`` when asked: a test may change it in place."""

    def reply(body: dict[str, Any]) -> str:
        system, user = (m["content"] for m in body["messages"])
        if "question-answer pairs" in system:
            listed = json.dumps(chunk_pairs, ensure_ascii=False)
            return f"Đây là các cặp:\n```json\n{listed}\n```"
        return json.dumps([f"{user} vậy ạ", "hp khmt bn"], ensure_ascii=False)

    for _ in range(20):
        stub.script_chat(reply)


def chats(stub: OpenAIStub) -> int:
    return len(stub.requests_to("/v1/chat/completions"))


@pytest.fixture
async def llm(parts: AnswererParts, stub: OpenAIStub) -> AsyncIterator[LlmClient]:
    settings = parts.settings.llm.model_copy(
        update={"base_url": stub.base_url, "api_key": SecretStr("sk-test"), "model": "m"}
    )
    client = LlmClient(settings, max_retries=0)  # retries are run_batch's, counted below
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def fees(
    sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer, tmp_path: Path
) -> str:
    path = tmp_path / "hoc-phi.md"
    path.write_text(FEES, encoding="utf-8")
    async with sessionmaker.begin() as session:
        await index_document(session, indexer, load_file(path))
    return str(path)


async def generated_entries(session: AsyncSession, source: str) -> list[FaqEntry]:
    rows = await session.scalars(
        select(FaqEntry)
        .join(Document, Document.id == FaqEntry.source_document_id)
        .where(Document.source == source)
        .order_by(FaqEntry.id)
    )
    return list(rows.all())


def run(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    llm: LlmClient | None,
    source: str,
    *,
    dry_run: bool = False,
    attempts: int = 3,
    **options: Any,
) -> Any:
    """The draft job on ``source`` with ``options``: its plan (``dry_run``) or a run."""
    limits = BatchLimits(attempts=attempts, base_delay=0.001)
    job = FaqDraftJob(
        sessionmaker, indexer, llm, FaqDraftOptions(sources=(source,), **options), limits
    )
    return job.plan() if dry_run else job.run()


def test_pairs_are_read_from_prose_fences_and_wrappers() -> None:
    fenced = 'Sure:\n```json\n[{"question": " Q1 ", "answer": "A1"}, {"question": "Q2"}]\n```'
    assert [(p.question, p.answer) for p in parse_pairs(fenced, 5)] == [("Q1", "A1")]
    wrapped = '{"pairs": [{"q": "Q1", "a": "A1"}, {"q": "Q2", "a": "A2"}, {"q": "Q3", "a": "A3"}]}'
    assert [p.question for p in parse_pairs(wrapped, 2)] == ["Q1", "Q2"]
    assert parse_pairs("[]", 3) == []
    with pytest.raises(LlmError):
        parse_pairs("I cannot help with that.", 3)


async def test_drafts_are_traced_to_their_chunk_and_answer_only_once_published(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    indexer: Indexer,
    llm: LlmClient,
    stub: OpenAIStub,
    fees: str,
) -> None:
    llm_replies(stub, [{"question": FEE_Q, "answer": FEE_A}, MADE_UP])
    report = await run(sessionmaker, indexer, llm, fees, per_chunk=3, paraphrases=2)
    assert (report.chunks, report.drafts, report.rejected, report.failed) == (1, 1, 1, [])
    assert report.llm_calls == 2  # one for the chunk, one for the draft's phrasings
    [entry] = await generated_entries(session, fees)
    chunk = await session.scalar(select(Chunk).where(Chunk.id == entry.source_chunk_id))
    document = await session.get(Document, entry.source_document_id)
    assert chunk is not None
    assert document is not None
    assert (entry.question, entry.answer) == (FEE_Q, FEE_A)
    assert (entry.origin, entry.status, entry.updated_by) == (
        FaqOrigin.generated,
        FaqStatus.draft,
        GENERATED_BY,
    )
    assert entry.source_text == chunk.text
    assert entry.source_version == document.content_hash
    assert entry.embedding is not None
    variants = (
        await session.execute(
            select(FaqVariant.text, FaqVariant.source_version).where(
                FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.generated
            )
        )
    ).all()
    texts = {t for t, _ in variants}
    assert {f"{FEE_Q} vậy ạ", "hp khmt bn"} <= texts  # the LLM's, then shorthand ones too
    assert {v for _, v in variants} == {question_version(FEE_Q)}
    sent = stub.requests_to("/v1/chat/completions")[0].body["messages"][1]["content"]
    assert "32.500.000" in sent

    # Tier 1 matches published entries only: the draft's own question does not reach it.
    [vector] = await asyncio.to_thread(indexer.embedder.embed_queries, [FEE_Q])
    terms = indexer.processor.query_terms(FEE_Q)

    async def candidates() -> list[int]:
        found = await faq_candidates(session, indexer.processor, FEE_Q, terms, vector, limit=5)
        return [c.faq_id for c in found]

    assert entry.id not in await candidates()
    entry.status = FaqStatus.published
    await session.flush()
    assert (await candidates())[0] == entry.id


async def test_dry_run_changes_nothing_and_a_rerun_asks_nothing(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    indexer: Indexer,
    llm: LlmClient,
    stub: OpenAIStub,
    fees: str,
) -> None:
    dry = await run(sessionmaker, indexer, None, fees, per_chunk=3, paraphrases=4, dry_run=True)
    assert (dry.chunks, dry.drafts) == (1, 0)
    assert dry.estimate.calls == 1 + 3  # the chunk, then at most 3 drafts to paraphrase
    assert dry.estimate.prompt_tokens > 0
    assert chats(stub) == 0
    assert await generated_entries(session, fees) == []

    llm_replies(stub, [{"question": FEE_Q, "answer": FEE_A}])
    first = await run(sessionmaker, indexer, llm, fees, paraphrases=2)
    assert first.drafts == 1
    calls = chats(stub)
    again = await run(sessionmaker, indexer, llm, fees, paraphrases=2)
    assert (again.chunks, again.skipped, again.drafts, again.llm_calls) == (0, 1, 0, 0)
    assert chats(stub) == calls
    # Staff delete the draft: it stays deleted, the chunk is not asked about again.
    async with sessionmaker.begin() as s:
        await s.execute(delete(FaqEntry).where(FaqEntry.origin == FaqOrigin.generated))
    after = await run(sessionmaker, indexer, llm, fees, paraphrases=2)
    assert (after.chunks, after.skipped, after.drafts) == (0, 1, 0)
    assert chats(stub) == calls


async def test_force_replaces_untouched_drafts_only(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    indexer: Indexer,
    llm: LlmClient,
    stub: OpenAIStub,
    fees: str,
) -> None:
    three = [
        {"question": FEE_Q, "answer": FEE_A},
        {"question": "Hạn đóng học phí là khi nào?", "answer": "Trước ngày 30/08/2025."},
        {"question": "Học phí tính theo năm hay kỳ?", "answer": "32.500.000 đồng một năm."},
    ]
    llm_replies(stub, three)
    await run(sessionmaker, indexer, llm, fees, paraphrases=0)
    published, edited, untouched = await generated_entries(session, fees)
    async with sessionmaker.begin() as s:
        for entry, change in (
            (published, {"status": FaqStatus.published}),
            (edited, {"answer": "Trước 30/08/2025, tại phòng Tài vụ.", "updated_by": "a@uni.vn"}),
        ):
            row = await s.get(FaqEntry, entry.id)
            assert row is not None
            for key, value in change.items():
                setattr(row, key, value)

    three[:] = [{"question": "Đóng học phí trước ngày nào?", "answer": "30/08/2025"}]
    forced = await run(sessionmaker, indexer, llm, fees, paraphrases=0, force=True)
    assert (forced.drafts, forced.replaced) == (1, 1)
    session.expunge_all()
    left = {e.id: e.question for e in await generated_entries(session, fees)}
    assert published.id in left
    assert edited.id in left
    assert untouched.id not in left
    assert "Đóng học phí trước ngày nào?" in left.values()


async def test_a_failing_call_is_retried_then_the_chunk_is_skipped(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    indexer: Indexer,
    llm: LlmClient,
    stub: OpenAIStub,
    fees: str,
) -> None:
    stub.fail(500)  # the first attempt fails, the retry succeeds
    llm_replies(stub, [{"question": FEE_Q, "answer": FEE_A}])
    retried = await run(sessionmaker, indexer, llm, fees, paraphrases=0, attempts=2)
    assert (retried.drafts, retried.llm_calls, retried.failed) == (1, 2, [])

    stub.fail(500, times=2)
    failed = await run(sessionmaker, indexer, llm, fees, paraphrases=0, attempts=2, force=True)
    assert failed.llm_calls == 2
    assert failed.drafts == 0
    [(where, reason)] = failed.failed
    assert where == f"{fees} #0"
    assert "HTTP 500" in reason
    session.expunge_all()
    assert [e.question for e in await generated_entries(session, fees)] == [FEE_Q]  # kept


async def test_a_chunk_that_answers_nothing_is_not_asked_again(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    llm: LlmClient,
    stub: OpenAIStub,
    fees: str,
) -> None:
    llm_replies(stub, [MADE_UP])  # its only pair is rejected
    first = await run(sessionmaker, indexer, llm, fees)
    assert (first.drafts, first.rejected) == (0, 1)
    calls = chats(stub)
    again = await run(sessionmaker, indexer, llm, fees)
    assert (again.chunks, again.skipped) == (0, 1)
    assert chats(stub) == calls
