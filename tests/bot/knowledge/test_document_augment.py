"""URAG-D (`tuvan augment`): contexts, rewritten chunks and summaries from an LLM — the OpenAI
stub on 127.0.0.1 stands in for it — stored, embedded, searched; and kept honest."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import LlmSettings
from bot.db.models import Chunk, Document, DocumentSummary
from bot.knowledge.document_augment import (
    DocumentAugmentJob,
    DocumentAugmentOptions,
    DocumentAugmentReport,
)
from bot.knowledge.extractive_summaries import ExtractiveSummaryJob
from bot.knowledge.ingest import ingest_paths
from bot.llm.batch import BatchLimits
from bot.llm.client import LlmClient
from retrieval.chunking.base import ChunkDraft
from retrieval.index.documents import chunk_search_text
from retrieval.index.indexer import Indexer
from retrieval.index.summaries import extractive_summary
from retrieval.search.hybrid import search_chunks
from tests.bot.knowledge._support import (
    DORM,
    FEES,
    MARK,
    chats,
    chunks_then,
    faithful,
    script,
)
from tests.fakes.openai_stub import OpenAIStub


@pytest.fixture
async def llm(stub: OpenAIStub) -> AsyncIterator[tuple[LlmClient, LlmSettings]]:
    settings = LlmSettings(
        base_url=stub.base_url, api_key=SecretStr("sk-test"), model="m", concurrency=2, attempts=2
    )
    client = LlmClient(settings, max_retries=0)
    try:
        yield client, settings
    finally:
        await client.aclose()


@pytest.fixture
async def corpus(
    tmp_path: Path, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "hoc-phi-vi-mach.md").write_text(FEES, encoding="utf-8")
    (folder / "ky-tuc-xa-vi-mach.md").write_text(DORM, encoding="utf-8")
    report = await ingest_paths(sessionmaker, indexer, [folder])
    assert len(report.indexed) == 2
    return folder


def augmenter(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    llm: tuple[LlmClient, LlmSettings],
    **update: Any,
) -> Callable[[DocumentAugmentOptions], Awaitable[DocumentAugmentReport]]:
    """A run of the augmentation job with ``options``, under the LLM settings ``update``d."""
    client, settings = llm
    limits = BatchLimits.of(settings.model_copy(update=update), base_delay=0)
    return lambda options: DocumentAugmentJob(sessionmaker, indexer, client, options, limits).run()


async def stored(session: AsyncSession, folder: Path) -> dict[str, Any]:
    """name → (document, its chunks, its summary), read fresh."""
    session.expire_all()
    docs = (
        await session.scalars(select(Document).where(Document.source.startswith(str(folder))))
    ).all()
    out = {}
    for d in docs:
        chunks = (
            await session.scalars(
                select(Chunk).where(Chunk.document_id == d.id).order_by(Chunk.ordinal)
            )
        ).all()
        out[Path(d.source).name] = (d, chunks, await session.get(DocumentSummary, d.id))
    return out


def options(folder: Path, **kw: Any) -> DocumentAugmentOptions:
    return DocumentAugmentOptions(sources=(str(folder),), **kw)


# -- the job ----------------------------------------------------------------------------------


async def test_augment_stores_contexts_rewrites_and_summaries_that_search_uses(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    parts: AnswererParts,
) -> None:
    script(stub, faithful)
    report = await augmenter(sessionmaker, indexer, llm)(options(corpus))
    found = await stored(session, corpus)
    n_chunks = sum(len(chunks) for _, chunks, _ in found.values())
    assert (report.documents, report.contexts, report.summaries) == (2, 2, 2)
    assert report.chunks == n_chunks
    assert report.kept_original == 0
    assert not report.failed
    assert report.calls == chats(stub) == 4 + n_chunks
    for doc, chunks, summary in found.values():
        assert doc.context == f"Thông báo của Phòng Tuyển sinh về {doc.title}."
        assert summary is not None
        assert summary.source_version == doc.content_hash
        assert summary.embedding is not None
        assert summary.keyword_text
        for chunk in chunks:
            assert chunk.augmented_text == f"Đoạn này thuộc {doc.title} {MARK}.\n\n{chunk.text}"
            assert MARK not in chunk.text
            draft = ChunkDraft(0, chunk.text, tuple(chunk.heading_path.split(" › ")), None, 0)
            search_text = chunk_search_text(doc.title, draft, augmented=chunk.augmented_text)
            assert search_text.startswith(doc.title)  # the header is still in front
            assert chunk.keyword_text == indexer.processor.keyword_text(search_text)
            [expected] = await indexer.passages([search_text])
            assert list(chunk.embedding) == pytest.approx(list(expected), abs=1e-5)
    # the rewrites are searched, the originals are what a hit (and so a citation) carries
    [vector] = indexer.embedder.embed_queries([MARK])
    hits = await search_chunks(
        session, vector, [MARK], parts.settings.search, limit=10, mode="keyword"
    )
    assert {h.chunk_id for h in hits} == {c.id for _, cs, _ in found.values() for c in cs}
    assert all(MARK not in h.text for h in hits)
    answer = await Answerer(parts, sessionmaker).answer(
        "Ngành Thiết kế Vi mạch thu bao nhiêu tiền một năm?"
    )
    assert answer.tier == "documents", answer.reason
    assert "28.500.000" in answer.answer
    assert MARK not in answer.answer
    assert "Đoạn này thuộc" not in answer.answer


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda p: p.replace("28.500.000 đồng", "28,5 triệu đồng"), "drops"),
        (lambda p: p.replace("1200 chỗ ở", "1200 chỗ ở (99 phòng)"), "adds"),
    ],
)
async def test_a_rewrite_that_changes_a_number_is_rejected_and_the_original_kept(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    caplog: pytest.LogCaptureFixture,
    change: Callable[[str], str],
    why: str,
) -> None:
    script(stub, chunks_then(lambda body: change(faithful(body))))
    with caplog.at_level(logging.WARNING, logger="bot.knowledge.document_augment"):
        report = await augmenter(sessionmaker, indexer, llm)(options(corpus))
    changed = [c for _, cs, _ in (await stored(session, corpus)).values() for c in cs]
    rejected = [c for c in changed if c.augmented_text == c.text]
    assert len(rejected) == report.kept_original == 1
    assert all(c.augmented_text and MARK in c.augmented_text for c in changed if c not in rejected)
    assert any(f"rejected, the original is kept: it {why}" in r.message for r in caplog.records)


async def test_a_re_run_calls_nothing_and_force_redoes_everything(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
) -> None:
    script(stub, faithful)
    job = augmenter(sessionmaker, indexer, llm)
    first = await job(options(corpus))
    again = await job(options(corpus))
    assert (again.planned, again.calls, again.already_done) == (0, 0, first.chunks)
    assert chats(stub) == first.calls
    forced = await job(options(corpus, force=True))
    assert forced.calls == forced.planned == first.planned
    assert (forced.contexts, forced.chunks, forced.summaries) == (2, first.chunks, 2)


async def test_re_ingesting_a_changed_document_drops_its_augmentation_and_summary(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
) -> None:
    script(stub, faithful)
    job = augmenter(sessionmaker, indexer, llm)
    await job(options(corpus))
    (corpus / "ky-tuc-xa-vi-mach.md").write_text(DORM.replace("1200", "1500"), encoding="utf-8")
    report = await ingest_paths(sessionmaker, indexer, [corpus])
    assert len(report.indexed) == 1
    found = await stored(session, corpus)
    dorm, dorm_chunks, dorm_summary = found["ky-tuc-xa-vi-mach.md"]
    assert dorm.context is None
    assert dorm_summary is None
    assert all(c.augmented_text is None for c in dorm_chunks)
    fees, fees_chunks, fees_summary = found["hoc-phi-vi-mach.md"]
    assert fees.context
    assert fees_summary
    assert all(c.augmented_text for c in fees_chunks)
    before = chats(stub)
    redo = await job(options(corpus))
    assert redo.calls == chats(stub) - before == 2 + len(dorm_chunks)


async def test_dry_run_estimates_and_neither_calls_nor_changes_anything(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
) -> None:
    client, settings = llm
    for with_llm in (client, None):  # --dry-run estimates without an LLM too
        limits = BatchLimits.of(settings)
        job = DocumentAugmentJob(sessionmaker, indexer, with_llm, options(corpus), limits)
        report = await job.plan()
        n_chunks = sum(len(cs) for _, cs, _ in (await stored(session, corpus)).values())
        assert report.planned == report.estimate.calls == 4 + n_chunks
        assert report.estimate.prompt_tokens > 100
        assert report.estimate.max_completion_tokens == report.planned * settings.max_tokens
    assert chats(stub) == 0
    for doc, chunks, summary in (await stored(session, corpus)).values():
        assert doc.context is None
        assert summary is None
        assert all(c.augmented_text is None for c in chunks)


async def test_a_failing_call_is_retried_then_skipped_without_stopping_the_others(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
) -> None:
    script(stub, faithful)
    stub.fail(500, times=2)  # one at a time: the first job, the fees document's context
    job = augmenter(sessionmaker, indexer, llm, concurrency=1)
    report = await job(options(corpus))
    failed = [what for what, _ in report.failed]
    assert any(w.startswith("context of") and w.endswith("hoc-phi-vi-mach.md") for w in failed)
    assert any(w.startswith("rewrites of") and w.endswith("hoc-phi-vi-mach.md") for w in failed)
    found = await stored(session, corpus)
    fees, fees_chunks, fees_summary = found["hoc-phi-vi-mach.md"]
    dorm, dorm_chunks, dorm_summary = found["ky-tuc-xa-vi-mach.md"]
    assert fees.context is None
    assert all(c.augmented_text is None for c in fees_chunks)
    assert fees_summary is not None  # its other calls went on
    assert dorm.context
    assert dorm_summary
    assert all(c.augmented_text for c in dorm_chunks)
    redo = await job(options(corpus))
    assert not redo.failed
    assert redo.calls == 1 + len(fees_chunks)


async def test_a_context_that_invents_a_number_is_asked_for_again(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
) -> None:
    stub.script_chat("Thông báo năm 2031 của trường.")  # 2031 is in neither document
    script(stub, faithful)
    report = await augmenter(sessionmaker, indexer, llm, concurrency=1)(
        options(corpus, summaries=False)
    )
    assert not report.failed
    assert report.calls == report.planned + 1
    for doc, _, summary in (await stored(session, corpus)).values():
        assert doc.context
        assert "2031" not in doc.context
        assert summary is None  # --no-summaries


async def test_extractive_summaries_need_no_llm_and_an_llm_run_replaces_them(
    stub: OpenAIStub,
    llm: tuple[LlmClient, LlmSettings],
    corpus: Path,
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
) -> None:
    report = await ExtractiveSummaryJob(sessionmaker, indexer, options(corpus)).run()
    assert report.summaries == 2
    assert chats(stub) == 0
    written = []
    for doc, chunks, summary in (await stored(session, corpus)).values():
        expected = extractive_summary(doc.title, [(c.heading_path, c.text) for c in chunks])
        assert summary is not None
        assert summary.summary == expected
        written.append(expected)
    assert any("1200 chỗ ở" in w for w in written)  # the dorm document's opening, as written
    script(stub, faithful)
    await augmenter(sessionmaker, indexer, llm)(options(corpus))
    for doc, _, summary in (await stored(session, corpus)).values():
        assert summary is not None
        assert summary.summary.startswith(f"Tài liệu {doc.title}")
