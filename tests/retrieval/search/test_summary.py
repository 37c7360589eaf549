"""Search mode "summary": documents by their summary first, then chunks inside them; hybrid when
no summary exists. On the demo knowledge base in a real PostgreSQL."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

import retrieval.search
from bot.answer.parts import AnswererParts
from bot.db.models import Chunk, Document, DocumentSummary
from retrieval.index.indexer import Indexer
from retrieval.index.reindex import count_embeddable, reindex
from retrieval.index.summaries import store_summary, summary_search_text
from retrieval.search.hits import Hit
from retrieval.search.hybrid import search_chunks

TUITION = "học phí chương trình chuẩn"
# What hoc-bong.md is made to be about in these tests, instead of its scholarships.
LURE = "Học phí chương trình chuẩn của trường: mức thu, cách đóng học phí chương trình chuẩn."
ELSEWHERE = "Nội quy thư viện, giờ mở cửa và cách mượn sách."


async def search(
    session: AsyncSession, parts: AnswererParts, question: str, mode: str, limit: int = 5
) -> list[Hit]:
    [vector] = await asyncio.to_thread(
        parts.embedder.embed_queries, [parts.processor.expand_query(question)]
    )
    return await search_chunks(
        session,
        vector,
        parts.processor.query_terms(question),
        parts.settings.search,
        limit=limit,
        mode=mode,  # type: ignore[arg-type]
        query_text=question,
    )


def names(hits: list[Hit]) -> list[str]:
    return [Path(h.source).name for h in hits]


async def documents_by_name(session: AsyncSession) -> dict[str, Document]:
    docs = (await session.scalars(select(Document))).all()
    return {Path(d.source).name: d for d in docs}


async def summarise(
    session: AsyncSession, indexer: Indexer, doc: Document, summary: str | None = None
) -> None:
    await store_summary(
        session, indexer, doc.id, doc.title, doc.content_hash, summary or f"{doc.title}."
    )


@pytest.mark.parametrize("question", [TUITION, "ktx dang ky nhu the nao", "học bổng thủ khoa"])
async def test_without_summaries_the_mode_is_hybrid_and_says_so_once(
    session: AsyncSession,
    parts: AnswererParts,
    demo_kb: object,
    question: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(retrieval.search.summary, "_notices", set())
    assert await session.scalar(select(DocumentSummary.document_id).limit(1)) is None
    with caplog.at_level(logging.INFO, logger="retrieval.search.summary"):
        summary = await search(session, parts, question, "summary")
        again = await search(session, parts, question, "summary")
    hybrid = await search(session, parts, question, "hybrid")
    assert summary
    assert [(h.chunk_id, h.score) for h in summary] == [(h.chunk_id, h.score) for h in hybrid]
    assert again == summary
    said = [r.message for r in caplog.records if "no document summaries" in r.message]
    assert len(said) == 1


async def test_summary_mode_searches_inside_the_documents_the_summaries_pick(
    session: AsyncSession, parts: AnswererParts, indexer: Indexer, demo_kb: object
) -> None:
    hybrid = names(await search(session, parts, TUITION, "hybrid", limit=10))
    assert hybrid[0] == "hoc-phi-2026.md"
    assert "ho-so-nhap-hoc.md" in hybrid[:4]  # fees paid on enrolment
    assert "hoc-bong.md" not in hybrid
    docs = await documents_by_name(session)
    for name, doc in docs.items():  # each summary is its title, but for one lure
        await summarise(session, indexer, doc, LURE if name == "hoc-bong.md" else None)
    hits = await search(session, parts, TUITION, "summary", limit=10)
    assert names(hits)[0] == "hoc-phi-2026.md"
    # The summary of the enrolment document (its title) is not about tuition: it is left out;
    # the lure's summary is, so its chunks are searched and rank on their document's behalf.
    assert "ho-so-nhap-hoc.md" not in names(hits)
    assert "hoc-bong.md" in names(hits)
    assert len({h.document_id for h in hits}) <= retrieval.search.summary.SUMMARY_DOCUMENTS
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # similarity is still the chunk's own cosine to the question (what t_doc applies to)
    [vector] = parts.embedder.embed_queries([parts.processor.expand_query(TUITION)])
    for h in hits:
        chunk = await session.get(Chunk, h.chunk_id)
        assert chunk is not None
        stored = np.asarray(chunk.embedding, dtype=np.float64)
        cosine = float(stored @ vector / (np.linalg.norm(stored) * np.linalg.norm(vector)))
        assert h.similarity == pytest.approx(cosine, abs=1e-4)


async def test_documents_without_a_summary_stay_searchable(
    session: AsyncSession, parts: AnswererParts, indexer: Indexer, demo_kb: object
) -> None:
    docs = await documents_by_name(session)
    await summarise(session, indexer, docs["ky-tuc-xa.md"], ELSEWHERE)
    hits = await search(session, parts, TUITION, "summary")
    assert "hoc-phi-2026.md" in names(hits)[:3]


async def test_reindex_re_embeds_summaries(
    session: AsyncSession, parts: AnswererParts, indexer: Indexer, demo_kb: object
) -> None:
    doc = (await documents_by_name(session))["hoc-bong.md"]
    await summarise(session, indexer, doc, LURE)
    before = await count_embeddable(session)
    await session.execute(
        update(DocumentSummary)
        .where(DocumentSummary.document_id == doc.id)
        .values(embedding=None, keyword_text="")
    )
    done = await reindex(session, indexer)
    assert done == before
    row = await session.get(DocumentSummary, doc.id)
    assert row is not None
    await session.refresh(row)
    [expected] = await indexer.passages([summary_search_text(doc.title, LURE)])
    assert row.embedding is not None
    assert list(row.embedding) == pytest.approx(list(expected), abs=1e-5)
    assert row.keyword_text == parts.processor.keyword_text(summary_search_text(doc.title, LURE))
