"""Two fixes proposed for keyword search on large stores, measured beside the current code.

1. ``InvertedBm25`` (adopted: it is now retrieval.search.keyword.Bm25Index): the same Okapi BM25 as
   rank-bm25's ``BM25Okapi`` (k1 1.5, b 0.75, idf floor 0.25 x mean idf, unknown terms 0) over a
   sparse term-by-document matrix, so a query costs the postings of its terms instead of a
   Python loop over every document per term.
2. ``pruned_fts_ranking`` (rejected: recall fell, p95 stayed ~350 ms): PostgreSQL full-text with
   the terms that match more than a share of the chunks left out (document frequencies from
   ``ts_stat``; a pair's frequency bounded by its rarer word's), ranked as retrieval.search ranks
   (``ts_rank(tsv, tq, 1)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.settings import SearchSettings
from retrieval.search.dense import dense_ranking
from retrieval.search.hits import Hit, diversify
from retrieval.search.hits import load_hits as _hits
from retrieval.search.hybrid import fuse as _fuse
from retrieval.search.keyword import Bm25Index, or_tsquery

_KEYWORD_ROWS = text("SELECT id, keyword_text FROM chunks ORDER BY id")
_TS_STAT = text("SELECT word, ndoc FROM ts_stat('SELECT tsv FROM chunks')")
_TS_RANK_SQL = text(
    """
    SELECT c.id, ts_rank(c.tsv, tq, 1) AS kscore
    FROM chunks c, to_tsquery('simple', :tsq) tq
    WHERE c.tsv @@ tq
    ORDER BY kscore DESC, c.id LIMIT :n
    """
)


# The proposal was adopted: retrieval.search.keyword.Bm25Index is this index, measured here in
# isolation (without the per-query check that the chunks changed).
InvertedBm25 = Bm25Index


async def load_inverted_bm25(session: AsyncSession) -> InvertedBm25:
    rows = (await session.execute(_KEYWORD_ROWS)).all()
    return InvertedBm25([r.id for r in rows], [r.keyword_text.split() or ["_"] for r in rows])


async def word_frequencies(session: AsyncSession) -> dict[str, int]:
    """Chunks per word, from ``ts_stat`` (what a refresh after each ingestion would store)."""
    return {r.word: int(r.ndoc) for r in await session.execute(_TS_STAT)}


def prune_terms(terms: Sequence[str], df: dict[str, int], limit: float) -> list[str]:
    """The terms matching at most ``limit`` chunks; the three rarest if none does."""

    def freq(term: str) -> int:
        # PostgreSQL's 'simple' parser reads "hoc_phi" as the phrase hoc <-> phi.
        return min(df.get(w, 0) for w in term.split("_") if w) if term.strip("_") else 0

    kept = [t for t in terms if freq(t) <= limit]
    return kept or sorted(terms, key=freq)[:3]


async def pruned_fts_ranking(
    session: AsyncSession, terms: Sequence[str], n: int
) -> list[tuple[int, float]]:
    tsq = or_tsquery(terms)
    if not tsq:
        return []
    rows = await session.execute(_TS_RANK_SQL, {"tsq": tsq, "n": n})
    return [(r.id, float(r.kscore)) for r in rows]


async def search_with(
    session: AsyncSession,
    vector: np.ndarray[Any, Any],
    keyword: list[tuple[int, float]],
    settings: SearchSettings,
    *,
    hybrid: bool,
    query_text: str,
    limit: int = 10,
) -> list[Hit]:
    """``retrieval.search.search_chunks`` for modes keyword / hybrid, with ``keyword`` given
    (fused as full-text is: a chunk the keyword side did not return scores 0 there)."""
    dense = []
    if hybrid:
        dense = await dense_ranking(session, vector, settings.candidates, settings.hnsw_ef_search)
    scores = dict(keyword) if not hybrid else dict.fromkeys([*dict(keyword), *dict(dense)], 0.0)
    hits = await _hits(session, vector, scores, [c for c, _ in dense], [c for c, _ in keyword])
    if hybrid:
        hits = _fuse(hits, dense, keyword, None, settings)
    return diversify(hits, settings.max_chunks_per_doc)[:limit]


def mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.0f} MiB" if nbytes >= 2**20 else f"{math.ceil(nbytes / 1024)} KiB"
