"""Hybrid search over chunks: the search modes, composed of the rankers in this package.

Keyword search is BM25 over tuvan's own Vietnamese-aware terms, held in memory (``bm25``, the
default), or PostgreSQL full-text over the same terms (``fts``); docs/benchmarks.md says which
one wins where. The two rankings are fused by normalised score fusion (retrieval.search.fusion).
Every value reaches SQL as a bound parameter; query terms are also limited to ``[a-z0-9_]`` by
retrieval.text.terms, so the OR-tsquery built from them cannot carry operators.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.settings import SearchSettings
from bot.core.types import SearchMode
from bot.db.models import Document
from retrieval.search.dense import chunk_similarities, dense_ranking
from retrieval.search.fusion import interleave, rrf, score_fusion
from retrieval.search.graph import rerank_by_community
from retrieval.search.hits import Hit, distinct, load_hits
from retrieval.search.keyword import Bm25Result, bm25_search, fts_ranking, hybrid_uses_bm25
from retrieval.search.rerank import Reranker
from retrieval.search.summary import summary_first


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
    if mode == "hybrid+graph":  # hybrid, re-ranked by link-graph community (retrieval.search.graph)
        return await graph_search(
            session, query_vector, terms, settings, limit=limit, query_text=query_text
        )
    n = settings.candidates
    if mode == "summary":
        first = await summary_first(session, query_vector, terms, settings, limit)
        if first is not None:
            hits = await load_hits(session, query_vector, first.scores, first.dense, first.keyword)
            return distinct(hits)[:limit]
        mode = "hybrid"
    dense: list[tuple[int, float]] = []
    keyword: list[tuple[int, float]] = []
    bm25: Bm25Result | None = None
    if mode in ("dense", "hybrid", "hybrid+rerank"):
        dense = await dense_ranking(session, query_vector, n, settings.hnsw_ef_search)
    if mode in ("keyword", "bm25", "hybrid", "hybrid+rerank"):
        if mode == "bm25" or (mode != "keyword" and await hybrid_uses_bm25(session, settings)):
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
    hits = await load_hits(session, query_vector, scores, dense_ids, keyword_ids)
    if mode in ("hybrid", "hybrid+rerank"):
        hits = fuse(hits, dense, keyword, bm25, settings)
    if mode == "hybrid+rerank" and reranker is not None and query_text:
        hits = await asyncio.to_thread(reranker.rerank, query_text, hits)
    return distinct(hits)[:limit]


def fuse(
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


async def graph_search(
    session: AsyncSession,
    query_vector: np.ndarray[Any, Any],
    terms: Sequence[str],
    settings: SearchSettings,
    *,
    limit: int,
    query_text: str = "",
) -> list[Hit]:
    """``hybrid+graph``: hybrid search over enough chunks to see ``top_k`` documents, re-ranked
    by community (rerank_by_community), cut to ``limit``."""
    graph = settings.graph
    pool = max(limit, graph.top_k) * max(1, settings.max_chunks_per_doc)
    hits = await search_chunks(
        session, query_vector, terms, settings, limit=pool, mode="hybrid", query_text=query_text
    )
    ids = sorted({h.document_id for h in hits})
    rows = await session.execute(
        select(Document.id, Document.community).where(Document.id.in_(ids))
    )
    communities = {doc_id: community for doc_id, community in rows}
    return rerank_by_community(hits, communities, top_k=graph.top_k, min_share=graph.min_share)[
        :limit
    ]
