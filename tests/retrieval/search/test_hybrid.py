"""Hybrid search (retrieval.search) on the demo knowledge base in a real PostgreSQL, and
citations that point at the right document and page."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.types import SearchMode
from bot.knowledge.ingest import ingest_paths
from retrieval.index.indexer import Indexer
from retrieval.query import question_vector
from retrieval.search.fusion import rrf
from retrieval.search.hits import Hit, diversify
from retrieval.search.hybrid import search_chunks
from retrieval.search.keyword import or_tsquery

MODES: tuple[SearchMode, ...] = ("dense", "keyword", "bm25", "hybrid")


async def query(
    session: AsyncSession, parts: AnswererParts, question: str
) -> tuple[np.ndarray[Any, Any], list[str]]:
    """The vector and the keyword terms of a question, made as the answerer makes them
    (restored with the demo knowledge base's restorer, expanded)."""
    sessionmaker = async_sessionmaker(bind=session.bind, expire_on_commit=False)
    prepared = await Answerer(parts, sessionmaker).prepare(session, question)
    vectors = await asyncio.to_thread(parts.embedder.embed_queries, prepared.dense_texts)
    return question_vector(prepared, vectors), list(prepared.terms)


async def search(
    session: AsyncSession, parts: AnswererParts, question: str, mode: SearchMode, limit: int = 5
) -> list[Hit]:
    vector, terms = await query(session, parts, question)
    return await search_chunks(
        session,
        vector,
        terms,
        parts.settings.search,
        limit=limit,
        mode=mode,
        query_text=question,
    )


def documents(hits: list[Hit]) -> list[str]:
    return [Path(h.source).name for h in hits]


def hit(chunk_id: int, document_id: int, body: str, score: float) -> Hit:
    return Hit(
        chunk_id=chunk_id,
        document_id=document_id,
        text=body,
        heading_path="",
        page=None,
        ordinal=chunk_id,
        external_id=None,
        title=f"doc {document_id}",
        source=f"doc{document_id}.md",
        url=None,
        similarity=score,
        score=score,
    )


# -- pure parts ---------------------------------------------------------------------------------


def test_rrf_sums_reciprocal_ranks_over_rankings() -> None:
    fused = rrf([[10, 20, 30], [30, 10]], k=60)
    assert fused[10] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[20] == pytest.approx(1 / 62)
    assert fused[30] == pytest.approx(1 / 63 + 1 / 61)
    assert sorted(fused, key=lambda c: -fused[c]) == [10, 30, 20]
    assert rrf([], k=60) == {}
    assert rrf([[5]], k=0) == {5: 1.0}


def test_diversify_moves_chunks_past_the_cap_behind_and_drops_repeated_texts() -> None:
    hits = [
        hit(1, 1, "Học phí 32.500.000 đồng", 0.9),
        hit(2, 1, "Học phí  CLC 65.000.000 đồng", 0.8),
        hit(3, 1, "Học phí quốc tế", 0.7),  # a third chunk of document 1
        hit(4, 2, "học phí 32.500.000   đồng", 0.6),  # the first text again, other document
        hit(5, 2, "Miễn giảm học phí", 0.5),
    ]
    kept = diversify(hits, per_document=2)
    assert [h.chunk_id for h in kept] == [1, 2, 5, 3]
    assert [h.chunk_id for h in diversify(hits, per_document=1)] == [1, 5, 2, 3]


def test_or_tsquery_keeps_safe_terms_once_and_drops_the_rest() -> None:
    terms = ["hoc_phi", "cntt", "hoc_phi", "a&b", "x | y", "!", "học", "2026", "'; drop", ""]
    assert or_tsquery(terms) == "hoc_phi | cntt | 2026"
    assert or_tsquery(["&", "|"]) == ""


# -- on the demo knowledge base ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "mode"),
    [
        *(("học phí chương trình chuẩn", mode) for mode in MODES),
        # Without diacritics e5-small scored every chunk alike (0.81-0.83 on the demo KB; the
        # tuition chunks ranked 17th and 32nd of 115 in dense): the question is restored first.
        *(("hoc phi chuong trinh chuan", mode) for mode in MODES),
    ],
)
async def test_every_mode_finds_the_tuition_document(
    session: AsyncSession, parts: AnswererParts, demo_kb: object, question: str, mode: SearchMode
) -> None:
    hits = await search(session, parts, question, mode)
    assert hits
    assert "hoc-phi-2026.md" in documents(hits[:3])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(-1.0 <= h.similarity <= 1.0 for h in hits)


@pytest.mark.parametrize(
    ("question", "document"),
    [
        ("ktx dang ky nhu the nao", "ky-tuc-xa.md"),
        ("chi tieu ktmt", "nganh-dao-tao-2026.md"),
    ],
)
async def test_accent_free_abbreviated_question_finds_its_document(
    session: AsyncSession, parts: AnswererParts, demo_kb: object, question: str, document: str
) -> None:
    hits = await search(session, parts, question, "hybrid")
    assert document in documents(hits[:3])


@pytest.mark.parametrize("mode", ["keyword", "bm25"])
async def test_question_of_only_stopwords_and_emoji_finds_nothing_by_keyword(
    session: AsyncSession, parts: AnswererParts, demo_kb: object, mode: SearchMode
) -> None:
    question = "là gì vậy ạ ??? 😀🎓"
    assert parts.processor.query_terms(question) == []
    assert await search(session, parts, question, mode) == []


async def test_operator_characters_in_terms_reach_no_sql(
    session: AsyncSession, parts: AnswererParts, demo_kb: object
) -> None:
    vector, _ = await query(session, parts, "học phí")
    terms = ["hoc_phi') OR 1=1 --", "&", "!(", "|"]
    hits = await search_chunks(
        session, vector, terms, parts.settings.search, limit=5, mode="keyword"
    )
    assert hits == []
    # and the session is still usable: no aborted transaction behind
    assert await search(session, parts, "học phí", "keyword")


# -- citations: the right document and page ---------------------------------------------------


def write_pdf(path: Path, pages: list[str]) -> Path:
    """insert_htmlbox embeds a font with Vietnamese glyphs (the base-14 fonts have none)."""
    pdf = pymupdf.open()
    for html in pages:
        pdf.new_page().insert_htmlbox(pymupdf.Rect(50, 50, 545, 790), html)
    pdf.set_metadata({"title": "Thông báo nội bộ tuyển sinh"})
    pdf.save(path)
    pdf.close()
    return path


async def test_documents_answer_cites_the_pdf_page_holding_the_fact(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    answerer: Answerer,
    tmp_path: Path,
) -> None:
    pdf = write_pdf(
        tmp_path / "thong-bao-noi-bo.pdf",
        [
            "<h1>Thông báo nội bộ</h1><p>Phòng Tuyển sinh làm việc từ thứ Hai đến thứ Sáu, "
            "giờ hành chính, tại tầng 2 nhà A1.</p>",
            "<p>Mã bí mật tuyển sinh là ZX-4471. Thí sinh ghi mã bí mật tuyển sinh này "
            "vào mục ghi chú của phiếu đăng ký xét tuyển bổ sung.</p>",
            "<p>Kết quả xét tuyển bổ sung được gửi qua thư điện tử trong vòng năm ngày "
            "làm việc kể từ khi hồ sơ đầy đủ.</p>",
        ],
    )
    report = await ingest_paths(sessionmaker, indexer, [pdf])
    assert report.indexed == [str(pdf)]

    result = await answerer.answer("Mã bí mật tuyển sinh là gì?")
    assert result.tier == "documents", result.reason
    assert "ZX-4471" in result.answer
    cited = [c for c in result.citations if c.source == str(pdf)]
    assert cited, result.citations
    assert {c.page for c in cited} == {2}
    assert "trang 2" in result.answer


def test_weighted_rrf_scales_each_ranking() -> None:
    fused = rrf([[1, 2], [2, 3]], k=60, weights=[0.3, 1.0])
    assert fused[1] == pytest.approx(0.3 / 61)
    assert fused[2] == pytest.approx(0.3 / 62 + 1 / 61)
    assert fused[3] == pytest.approx(1 / 62)


@pytest.mark.parametrize(("fts_max_chunks", "expected"), [(1_000_000, "fts"), (0, "bm25")])
async def test_auto_keyword_uses_full_text_on_a_small_store_and_bm25_on_a_large_one(
    session: AsyncSession, parts: AnswererParts, demo_kb: object, fts_max_chunks: int, expected: str
) -> None:
    question = "ký túc xá đăng ký như thế nào"
    vector, terms = await query(session, parts, question)
    base = parts.settings.search

    async def ranked(**update: object) -> list[int]:
        settings = base.model_copy(update=update)
        hits = await search_chunks(
            session, vector, terms, settings, limit=10, mode="hybrid", query_text=question
        )
        return [h.chunk_id for h in hits]

    auto = await ranked(keyword="auto", fts_max_chunks=fts_max_chunks)
    assert auto == await ranked(keyword=expected)
    assert auto != await ranked(keyword="bm25" if expected == "fts" else "fts")


async def test_the_ranking_keeps_every_chunk_of_a_document_and_answers_spread_them(
    session: AsyncSession,
    parts: AnswererParts,
    sessionmaker: async_sessionmaker[AsyncSession],
    demo_kb: object,
) -> None:
    stored = await session.scalar(
        text(
            "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.source LIKE '%hoc-phi-2026.md'"
        )
    )
    assert stored is not None
    assert stored > 3
    hits = await search(session, parts, "học phí các chương trình năm 2026", "hybrid", limit=30)
    tuition = [h for h in hits if h.source.endswith("hoc-phi-2026.md")]
    assert len(tuition) > parts.settings.search.max_chunks_per_doc
    no_faq = parts.settings.answer.model_copy(update={"t_faq": 1.01})  # documents only
    settings = parts.settings.model_copy(update={"answer": no_faq})
    answerer = Answerer(replace(parts, settings=settings), sessionmaker)
    answer = await answerer.answer("Học phí các chương trình năm 2026 là bao nhiêu?")
    assert answer.tier == "documents", answer.reason
    quoted = [c for c in answer.chunk_ids if c in {h.chunk_id for h in tuition}]
    assert len(quoted) <= parts.settings.search.max_chunks_per_doc
