"""Summary-first search (mode ``summary``): documents ranked by their summaries, then chunks
inside the chosen documents, each with the dense and keyword rankings fused by RRF."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.settings import SearchSettings
from retrieval.search.dense import set_ef_search, vector_literal
from retrieval.search.fusion import rrf
from retrieval.search.keyword import or_tsquery

log = logging.getLogger(__name__)

# Mode "summary": at least this many documents are kept from the summary ranking (more when
# the caller asks for more chunks than they can hold at max_chunks_per_doc each).
SUMMARY_DOCUMENTS = 5
# ... and a chunk's document's summary rank counts this much beside the chunk's own two ranks.
SUMMARY_DOCUMENT_WEIGHT = 1.0
_notices: set[str] = set()  # what has been logged once in this process


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
class SummaryRanking:
    """Chunk ids by each ranker inside the chosen documents, and their fused scores."""

    dense: list[int]
    keyword: list[int]
    scores: dict[int, float]


async def summary_first(
    session: AsyncSession,
    query_vector: np.ndarray[Any, Any],
    terms: Sequence[str],
    settings: SearchSettings,
    limit: int,
) -> SummaryRanking | None:
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
    q = vector_literal(query_vector)
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
        return SummaryRanking([], [], {})
    await set_ef_search(session, max(settings.hnsw_ef_search, n))
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
    return SummaryRanking(dense, keyword, scores)
