"""Hybrid search over chunks: pgvector ANN and keyword search, fused by reciprocal rank fusion.

Keyword search is PostgreSQL full-text over tuvan's own Vietnamese-aware terms (``fts``), or
BM25 over the same terms in memory (``bm25``); docs/benchmarks.md says which one wins where.
Every value reaches SQL as a bound parameter; query terms are also limited to ``[a-z0-9_]`` by
retrieval.text, so the OR-tsquery built from them cannot carry operators.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.settings import SearchMode, SearchSettings
from retrieval.bm25 import bm25_ranking
from retrieval.rerank import Reranker
from retrieval.text import detect_language

log = logging.getLogger(__name__)

_SAFE_TERM = re.compile(r"^[a-z0-9_]+$")
# Mode "summary": at least this many documents are kept from the summary ranking (more when
# the caller asks for more chunks than they can hold at max_chunks_per_doc each).
SUMMARY_DOCUMENTS = 5
# ... and a chunk's document's summary rank counts this much beside the chunk's own two ranks.
SUMMARY_DOCUMENT_WEIGHT = 1.0
_notices: set[str] = set()  # what has been logged once in this process


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    document_id: int
    text: str
    heading_path: str
    page: int | None
    ordinal: int
    external_id: str | None
    title: str
    source: str
    url: str | None
    similarity: float  # cosine between the question and the chunk; what t_doc applies to
    score: float  # the ranking score of the mode (RRF, cosine, ts_rank, BM25, or reranker)
    dense_rank: int | None = None
    keyword_rank: int | None = None


def or_tsquery(terms: Sequence[str]) -> str:
    """``a | b | c`` for to_tsquery('simple', …); unsafe terms are dropped, not escaped."""
    return " | ".join(t for t in dict.fromkeys(terms) if _SAFE_TERM.match(t))


_ROW_COLUMNS = """
    c.id AS chunk_id, c.document_id, c.text, c.heading_path, c.page, c.ordinal, c.external_id,
    d.title, d.source, d.url, 1 - (c.embedding <=> :q) AS similarity
"""

_DENSE_SQL = text(
    """
    SELECT id, row_number() OVER (ORDER BY embedding <=> :q) AS rank
    FROM chunks WHERE embedding IS NOT NULL
    ORDER BY embedding <=> :q LIMIT :n
    """
)

# ts_rank, not ts_rank_cd: on an OR of many terms the cover density rewards long chunks dense in
# common words ("nganh", "nam"), and normalisation 1 (divide by 1 + log length) keeps long chunks
# from winning on length alone. Document-level MRR@10 (`tuvan eval questions --compare`): full-text
# alone 0.60 -> 0.87 on UIT and 0.46 -> 0.90 on ALQAC, hybrid 0.76 -> 0.89 and 0.72 -> 0.94; and
# ALQAC's keyword search took 11 ms instead of 64 (p50). ts_rank_cd normalisations (1, 32) and
# ts_rank with 2 or 8 were worse, 16 about the same (docs/benchmarks.md).
_FTS_SQL = text(
    """
    SELECT c.id, ts_rank(c.tsv, tq, 1) AS kscore
    FROM chunks c, to_tsquery('simple', :tsq) tq
    WHERE c.tsv @@ tq
    ORDER BY kscore DESC, c.id LIMIT :n
    """
)

_ROWS_SQL = text(
    f"""
    SELECT {_ROW_COLUMNS}
    FROM chunks c JOIN documents d ON d.id = c.document_id
    WHERE c.id = ANY(:ids)
    """  # noqa: S608 - constant column list
).bindparams(bindparam("ids"))


async def _set_ef_search(session: AsyncSession, value: int) -> None:
    await session.execute(
        text("SELECT set_config('hnsw.ef_search', :v, true)"), {"v": str(int(value))}
    )


async def dense_ranking(
    session: AsyncSession, query_vector: np.ndarray[Any, Any], n: int, ef_search: int
) -> list[int]:
    await _set_ef_search(session, max(ef_search, n))
    rows = await session.execute(_DENSE_SQL, {"q": _vec(query_vector), "n": n})
    return [row.id for row in rows]


async def fts_ranking(
    session: AsyncSession, terms: Sequence[str], n: int
) -> list[tuple[int, float]]:
    tsq = or_tsquery(terms)
    if not tsq:
        return []
    rows = await session.execute(_FTS_SQL, {"tsq": tsq, "n": n})
    return [(row.id, float(row.kscore)) for row in rows]


def _vec(v: np.ndarray[Any, Any]) -> str:
    """pgvector's text form; bound as a parameter and cast by the ``<=>`` operator."""
    return "[" + ",".join(f"{x:.6f}" for x in np.asarray(v, dtype=np.float32).ravel()) + "]"


_CHUNK_ESTIMATE_SQL = text("SELECT reltuples::bigint FROM pg_class WHERE oid = 'chunks'::regclass")
_CHUNK_COUNT_SQL = text("SELECT count(*) FROM chunks")


async def _hybrid_uses_bm25(session: AsyncSession, settings: SearchSettings) -> bool:
    """``keyword=auto``: full-text while the store is small, BM25 past ``fts_max_chunks``.

    Full-text ranks every row its OR-query matches, and common syllables match most rows: fine
    on a few thousand chunks (and slightly the better retriever on admissions text), 0.8 s p95 at
    100,000 (docs/benchmarks.md). The planner's row estimate is enough to choose; a table never
    analysed (-1) is counted.
    """
    if settings.keyword != "auto":
        return settings.keyword == "bm25"
    rows = int((await session.execute(_CHUNK_ESTIMATE_SQL)).scalar_one())
    if rows < 0:
        rows = int((await session.execute(_CHUNK_COUNT_SQL)).scalar_one())
    return rows > settings.fts_max_chunks


def rrf(
    rankings: Sequence[Sequence[int]], k: int, weights: Sequence[float] | None = None
) -> dict[int, float]:
    """Reciprocal rank fusion: Σ w/(k + rank), ranks from 1."""
    fused: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        weight = weights[i] if weights else 1.0
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def lacks_diacritics(text: str) -> bool:
    """Vietnamese typed without its marks ("hoc phi nganh cntt"): e5 embeds such text poorly,
    ranking chunks nearly at random, so hybrid search leans on the keyword side for it."""
    return any(c.isalpha() for c in text) and text.isascii() and detect_language(text) == "vi"


# -- summary-first (mode "summary") ------------------------------------------------------------

_HAS_SUMMARIES_SQL = text(
    "SELECT EXISTS (SELECT 1 FROM document_summaries WHERE embedding IS NOT NULL)"
)

_SUMMARY_DENSE_SQL = text(
    """
    SELECT document_id FROM document_summaries WHERE embedding IS NOT NULL
    ORDER BY embedding <=> :q LIMIT :n
    """
)

_SUMMARY_FTS_SQL = text(
    """
    SELECT s.document_id, ts_rank(s.tsv, tq, 1) AS kscore
    FROM document_summaries s, to_tsquery('simple', :tsq) tq
    WHERE s.tsv @@ tq
    ORDER BY kscore DESC, s.document_id LIMIT :n
    """
)

# Documents with no summary yet stay searchable: a partial `tuvan augment` must hide nothing.
_UNSUMMARISED_SQL = text(
    """
    SELECT d.id FROM documents d
    WHERE NOT EXISTS (SELECT 1 FROM document_summaries s WHERE s.document_id = d.id)
    """
)

# Exact distances inside the chosen documents: few rows, found through the document_id index;
# a large scope (many documents without a summary) goes through HNSW, which an iterative scan
# (pgvector 0.8) keeps reading until the filter has let through enough rows.
_SCOPED_DENSE_SQL = text(
    """
    WITH nearest AS MATERIALIZED (
        SELECT c.id, c.embedding <=> :q AS distance FROM chunks c
        WHERE c.embedding IS NOT NULL AND c.document_id = ANY(:docs)
        ORDER BY distance LIMIT :n
    )
    SELECT id FROM nearest ORDER BY distance, id
    """
).bindparams(bindparam("docs"))

_SCOPED_FTS_SQL = text(
    """
    SELECT c.id, ts_rank(c.tsv, tq, 1) AS kscore
    FROM chunks c, to_tsquery('simple', :tsq) tq
    WHERE c.document_id = ANY(:docs) AND c.tsv @@ tq
    ORDER BY kscore DESC, c.id LIMIT :n
    """
).bindparams(bindparam("docs"))

_CHUNK_DOCUMENTS_SQL = text("SELECT id, document_id FROM chunks WHERE id = ANY(:ids)").bindparams(
    bindparam("ids")
)


@dataclass(frozen=True)
class _Ranked:
    dense: list[int]
    keyword: list[int]
    scores: dict[int, float]


async def _summary_first(
    session: AsyncSession,
    query_vector: np.ndarray[Any, Any],
    terms: Sequence[str],
    settings: SearchSettings,
    limit: int,
    dense_weight: float,
) -> _Ranked | None:
    """Documents by their summary (dense + keyword, RRF), then chunks inside them (the same).

    A chunk's score adds its document's summary rank to its own two ranks (three-way RRF), so
    the document the summary picks leads when the chunk rankings are close. None when no
    document has a summary: the caller searches as "hybrid".
    """
    if not (await session.execute(_HAS_SUMMARIES_SQL)).scalar_one():
        if "no-summaries" not in _notices:
            _notices.add("no-summaries")
            log.info("search mode summary: no document summaries yet, searching as hybrid")
        return None
    n = settings.candidates
    q = _vec(query_vector)
    doc_dense = [r.document_id for r in await session.execute(_SUMMARY_DENSE_SQL, {"q": q, "n": n})]
    doc_keyword: list[int] = []
    if tsq := or_tsquery(terms):
        rows = await session.execute(_SUMMARY_FTS_SQL, {"tsq": tsq, "n": n})
        doc_keyword = [r.document_id for r in rows]
    doc_scores = rrf([doc_dense, doc_keyword], settings.rrf_k, [dense_weight, 1.0])
    wanted = max(SUMMARY_DOCUMENTS, math.ceil(limit / max(settings.max_chunks_per_doc, 1)))
    chosen = sorted(doc_scores, key=lambda d: (-doc_scores[d], d))[:wanted]
    doc_rank = {d: i for i, d in enumerate(chosen, start=1)}
    scope = chosen + list((await session.scalars(_UNSUMMARISED_SQL)).all())
    if not scope:
        return _Ranked([], [], {})
    await _set_ef_search(session, max(settings.hnsw_ef_search, n))
    await session.execute(text("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)"))
    rows = await session.execute(_SCOPED_DENSE_SQL, {"q": q, "n": n, "docs": scope})
    dense = [r.id for r in rows]
    keyword: list[int] = []
    if tsq:
        rows = await session.execute(_SCOPED_FTS_SQL, {"tsq": tsq, "n": n, "docs": scope})
        keyword = [r.id for r in rows]
    scores = rrf([dense, keyword], settings.rrf_k, [dense_weight, 1.0])
    if scores:
        found = await session.execute(_CHUNK_DOCUMENTS_SQL, {"ids": list(scores)})
        for chunk_id, document_id in found:
            if document_id in doc_rank:
                prior = SUMMARY_DOCUMENT_WEIGHT / (settings.rrf_k + doc_rank[document_id])
                scores[chunk_id] += prior
    return _Ranked(dense, keyword, scores)


async def search_chunks(
    session: AsyncSession,
    query_vector: np.ndarray[Any, Any],
    terms: Sequence[str],
    settings: SearchSettings,
    *,
    limit: int,
    mode: SearchMode | None = None,
    query_text: str = "",
    reranker: Reranker | None = None,
) -> list[Hit]:
    """The best ``limit`` chunks for a question, de-duplicated, at most N per document."""
    mode = mode or settings.mode
    if mode == "hybrid+graph":  # hybrid, re-ranked by link-graph community (retrieval.graph)
        from retrieval.graph import graph_search  # imports this module

        return await graph_search(
            session, query_vector, terms, settings, limit=limit, query_text=query_text
        )
    n = settings.candidates
    dense: list[int] = []
    keyword: list[int] = []
    scores: dict[int, float] = {}
    dense_weight = settings.unaccented_dense_weight if lacks_diacritics(query_text) else 1.0
    if mode == "summary":
        first = await _summary_first(session, query_vector, terms, settings, limit, dense_weight)
        if first is not None:
            hits = await _hits(session, query_vector, first)
            return diversify(hits, settings.max_chunks_per_doc)[:limit]
        mode = "hybrid"
    if mode in ("dense", "hybrid", "hybrid+rerank"):
        dense = await dense_ranking(session, query_vector, n, settings.hnsw_ef_search)
    if mode in ("keyword", "bm25", "hybrid", "hybrid+rerank"):
        if mode == "bm25" or (mode != "keyword" and await _hybrid_uses_bm25(session, settings)):
            ranked = await bm25_ranking(session, terms, n)
        else:
            ranked = await fts_ranking(session, terms, n)
        keyword = [cid for cid, _ in ranked]
        if mode in ("keyword", "bm25"):
            scores = dict(ranked)
    if mode == "dense":
        scores = {cid: 0.0 for cid in dense}
    elif mode in ("hybrid", "hybrid+rerank"):
        scores = rrf([dense, keyword], settings.rrf_k, [dense_weight, 1.0])
    hits = await _hits(session, query_vector, _Ranked(dense, keyword, scores))
    if mode == "dense":
        hits = [replace(h, score=h.similarity) for h in hits]
        hits.sort(key=lambda h: (-h.score, h.chunk_id))
    if mode == "hybrid+rerank" and reranker is not None and query_text:
        hits = await asyncio.to_thread(reranker.rerank, query_text, hits)
    return diversify(hits, settings.max_chunks_per_doc)[:limit]


async def _hits(
    session: AsyncSession, query_vector: np.ndarray[Any, Any], ranked: _Ranked
) -> list[Hit]:
    """The ranked chunks as hits, best score first, with their cosine to the question."""
    if not ranked.scores:
        return []
    rows = await session.execute(_ROWS_SQL, {"q": _vec(query_vector), "ids": list(ranked.scores)})
    dense_pos = {cid: i for i, cid in enumerate(ranked.dense, start=1)}
    kw_pos = {cid: i for i, cid in enumerate(ranked.keyword, start=1)}
    hits = [
        Hit(
            **row._mapping,
            score=ranked.scores[row.chunk_id],
            dense_rank=dense_pos.get(row.chunk_id),
            keyword_rank=kw_pos.get(row.chunk_id),
        )
        for row in rows
    ]
    hits.sort(key=lambda h: (-h.score, h.chunk_id))
    return hits


_SIMILARITY_SQL = text(
    "SELECT id, 1 - (embedding <=> :q) AS similarity FROM chunks WHERE id = ANY(:ids)"
).bindparams(bindparam("ids"))


async def chunk_similarities(
    session: AsyncSession, query_vector: np.ndarray[Any, Any], chunk_ids: Sequence[int]
) -> dict[int, float]:
    """Cosine between a question and given chunks: what t_doc is held to when other queries
    (bot.query_plan) found them."""
    if not chunk_ids:
        return {}
    rows = await session.execute(_SIMILARITY_SQL, {"q": _vec(query_vector), "ids": list(chunk_ids)})
    return {row.id: float(row.similarity) for row in rows}


def diversify(hits: Sequence[Hit], per_document: int) -> list[Hit]:
    """Drop repeated texts (the same passage in two documents) and cap chunks per document."""
    seen_text: set[str] = set()
    per_doc: dict[int, int] = {}
    kept = []
    for hit in hits:
        key = " ".join(hit.text.split()).lower()
        if key in seen_text or per_doc.get(hit.document_id, 0) >= per_document:
            continue
        seen_text.add(key)
        per_doc[hit.document_id] = per_doc.get(hit.document_id, 0) + 1
        kept.append(hit)
    return kept
