"""Hybrid search over chunks: pgvector ANN and keyword search, fused by their scores.

Keyword search is BM25 over tuvan's own Vietnamese-aware terms, held in memory (``bm25``, the
default), or PostgreSQL full-text over the same terms (``fts``); docs/benchmarks.md says which
one wins where. The two rankings are fused by normalised score fusion (retrieval.fusion).
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

from bot.core.settings import SearchSettings
from bot.core.types import SearchMode
from retrieval.bm25 import Bm25Result, bm25_search
from retrieval.fusion import interleave, rrf, score_fusion
from retrieval.rerank import Reranker

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
    # A published FAQ entry read as a passage (tier 1 abstained): its answer is ``text``, and
    # ``chunk_id``/``document_id`` are ``-faq_id``, which no chunk or document has.
    faq_id: int | None = None


def or_tsquery(terms: Sequence[str]) -> str:
    """``a | b | c`` for to_tsquery('simple', …); unsafe terms are dropped, not escaped."""
    return " | ".join(t for t in dict.fromkeys(terms) if _SAFE_TERM.match(t))


_ROW_COLUMNS = """
    c.id AS chunk_id, c.document_id, c.text, c.heading_path, c.page, c.ordinal, c.external_id,
    d.title, d.source, d.url, 1 - (c.embedding <=> :q) AS similarity
"""

_DENSE_SQL = text(
    """
    SELECT id, 1 - (embedding <=> :q) AS similarity
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
) -> list[tuple[int, float]]:
    """The ``n`` nearest chunks with their cosine to the question."""
    await _set_ef_search(session, max(ef_search, n))
    rows = await session.execute(_DENSE_SQL, {"q": _vec(query_vector), "n": n})
    return [(row.id, float(row.similarity)) for row in rows]


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
    doc_scores = rrf([doc_dense, doc_keyword], settings.rrf_k)
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
    scores = rrf([dense, keyword], settings.rrf_k)
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
    """The best ``limit`` chunks for a question, repeated texts dropped.

    The ranking is not capped per document: an answer takes its passages through ``diversify``
    (the answerer), but a cap inside the ranking pushed right chunks out of the top 10 where one
    document holds many of them (docs/benchmarks.md, "Candidate depth and the per-document cap").
    """
    mode = mode or settings.mode
    if mode == "hybrid+graph":  # hybrid, re-ranked by link-graph community (retrieval.graph)
        from retrieval.graph import graph_search  # imports this module

        return await graph_search(
            session, query_vector, terms, settings, limit=limit, query_text=query_text
        )
    n = settings.candidates
    if mode == "summary":
        first = await _summary_first(session, query_vector, terms, settings, limit)
        if first is not None:
            hits = await _hits(session, query_vector, first.scores, first.dense, first.keyword)
            return distinct(hits)[:limit]
        mode = "hybrid"
    dense: list[tuple[int, float]] = []
    keyword: list[tuple[int, float]] = []
    bm25: Bm25Result | None = None
    if mode in ("dense", "hybrid", "hybrid+rerank"):
        dense = await dense_ranking(session, query_vector, n, settings.hnsw_ef_search)
    if mode in ("keyword", "bm25", "hybrid", "hybrid+rerank"):
        if mode == "bm25" or (mode != "keyword" and await _hybrid_uses_bm25(session, settings)):
            bm25 = await bm25_search(session, terms, n)
            keyword = bm25.top
        else:
            keyword = await fts_ranking(session, terms, n)
    dense_ids = [cid for cid, _ in dense]
    keyword_ids = [cid for cid, _ in keyword]
    if mode == "dense":
        scores = dict(dense)
    elif mode in ("keyword", "bm25"):
        scores = dict(keyword)
    else:
        scores = dict.fromkeys([*keyword_ids, *dense_ids], 0.0)
    hits = await _hits(session, query_vector, scores, dense_ids, keyword_ids)
    if mode in ("hybrid", "hybrid+rerank"):
        hits = _fuse(hits, dense, keyword, bm25, settings)
    if mode == "hybrid+rerank" and reranker is not None and query_text:
        hits = await asyncio.to_thread(reranker.rerank, query_text, hits)
    return distinct(hits)[:limit]


def _fuse(
    hits: Sequence[Hit],
    dense: Sequence[tuple[int, float]],
    keyword: Sequence[tuple[int, float]],
    bm25: Bm25Result | None,
    settings: SearchSettings,
) -> list[Hit]:
    """Hybrid: the dense and keyword rankings fused (``settings.fusion``), best first.

    Score fusion knows both scores of every candidate: the cosine from the rows, and BM25 from
    the index (full-text scores only the chunks its query matched; the rest score 0 there).
    """
    ids = [h.chunk_id for h in hits]
    if settings.fusion == "rrf":
        fused = rrf([[c for c, _ in dense], [c for c, _ in keyword]], settings.rrf_k)
    else:
        keyword_scores = bm25.scores_of(ids) if bm25 is not None else dict(keyword)
        fused = score_fusion(
            dict(keyword),
            dict(dense),
            keyword_scores,
            {h.chunk_id: h.similarity for h in hits},
            settings.keyword_weight,
        )
    ranked = [replace(h, score=fused.get(h.chunk_id, 0.0)) for h in hits]
    ranked.sort(key=lambda h: (-h.score, h.chunk_id))
    return ranked


async def search_parts(
    session: AsyncSession,
    vectors: Sequence[np.ndarray[Any, Any]],
    term_lists: Sequence[Sequence[str]],
    settings: SearchSettings,
    *,
    limit: int,
    mode: SearchMode | None = None,
    query_texts: Sequence[str] = (),
    reranker: Reranker | None = None,
) -> list[Hit]:
    """Several queries searched on their own, their rankings interleaved (retrieval.fusion).

    For a multi-part question: the whole question first, then each part, so that the best
    passage of every part reaches the answer. A hit's similarity is its cosine to the first
    vector (the whole question: what t_doc is held to, as for a question of one part; a part
    alone, "học phí bao nhiêu?", is close to any fee passage), its score the fused score it had
    in the ranking that placed it.
    """
    rankings = [
        await search_chunks(
            session,
            vector,
            terms,
            settings,
            limit=limit,
            mode=mode,
            query_text=query_texts[i] if i < len(query_texts) else "",
            reranker=reranker,
        )
        for i, (vector, terms) in enumerate(zip(vectors, term_lists, strict=True))
    ]
    by_id: dict[int, Hit] = {}
    for ranking in rankings:
        for hit in ranking:
            by_id.setdefault(hit.chunk_id, hit)
    order = interleave([[h.chunk_id for h in ranking] for ranking in rankings])[:limit]
    similarity = await chunk_similarities(session, vectors[0], order) if vectors else {}
    return [
        replace(by_id[cid], similarity=similarity.get(cid, by_id[cid].similarity)) for cid in order
    ]


async def _hits(
    session: AsyncSession,
    query_vector: np.ndarray[Any, Any],
    scores: dict[int, float],
    dense: Sequence[int],
    keyword: Sequence[int],
) -> list[Hit]:
    """The ranked chunks as hits, best score first, with their cosine to the question."""
    if not scores:
        return []
    rows = await session.execute(_ROWS_SQL, {"q": _vec(query_vector), "ids": list(scores)})
    dense_pos = {cid: i for i, cid in enumerate(dense, start=1)}
    kw_pos = {cid: i for i, cid in enumerate(keyword, start=1)}
    hits = [
        Hit(
            **row._mapping,
            score=scores[row.chunk_id],
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
    (bot.answer.query_plan) found them."""
    if not chunk_ids:
        return {}
    rows = await session.execute(_SIMILARITY_SQL, {"q": _vec(query_vector), "ids": list(chunk_ids)})
    return {row.id: float(row.similarity) for row in rows}


def distinct(hits: Sequence[Hit]) -> list[Hit]:
    """The hits without repeated texts (the same passage in two documents), in their order."""
    seen: set[str] = set()
    kept: list[Hit] = []
    for hit in hits:
        key = " ".join(hit.text.split()).lower()
        if key not in seen:
            seen.add(key)
            kept.append(hit)
    return kept


def diversify(hits: Sequence[Hit], per_document: int) -> list[Hit]:
    """Repeated texts dropped, and a document's chunks past the first ``per_document`` moved
    behind the rest, in their order: the passages an answer quotes come from several documents
    when several are relevant, and none is lost when fewer are."""
    per_doc: dict[int, int] = {}
    kept: list[Hit] = []
    later: list[Hit] = []
    for hit in distinct(hits):
        per_doc[hit.document_id] = per_doc.get(hit.document_id, 0) + 1
        (kept if per_doc[hit.document_id] <= per_document else later).append(hit)
    return kept + later
