"""Two proposed fixes for keyword search on large stores, measured beside the current code.

Neither is product code: if one is adopted, it belongs in retrieval/bm25.py or retrieval/search.py.

1. ``InvertedBm25``: the same Okapi BM25 as rank-bm25's ``BM25Okapi`` (k1 1.5, b 0.75, idf floor
   0.25 x mean idf, unknown terms 0) over a sparse term-by-document matrix, so a query costs the
   postings of its terms instead of a Python loop over every document per term.
2. ``pruned_fts_ranking``: PostgreSQL full-text with the terms that match more than a share of the
   chunks left out (document frequencies from ``ts_stat``; a pair's frequency bounded by its
   rarer word's), ranked as retrieval.search ranks (``ts_rank(tsv, tq, 1)``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.sparse import csc_matrix
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.settings import SearchSettings
from retrieval.search import (
    _ROWS_SQL,
    Hit,
    _vec,
    dense_ranking,
    diversify,
    lacks_diacritics,
    or_tsquery,
    rrf,
)

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


class InvertedBm25:
    def __init__(self, ids: Sequence[int], docs: Sequence[list[str]], *, k1: float = 1.5,
                 b: float = 0.75, epsilon: float = 0.25) -> None:
        self.ids = np.asarray(ids)
        self.vocab: dict[str, int] = {}
        rows, cols, freqs = [], [], []
        lengths = np.empty(len(docs), dtype=np.float32)
        for d, terms in enumerate(docs):
            counts = Counter(terms)
            lengths[d] = len(terms)
            cols.append(np.fromiter(
                (self.vocab.setdefault(t, len(self.vocab)) for t in counts), np.int32, len(counts)
            ))
            freqs.append(np.fromiter(counts.values(), np.float32, len(counts)))
            rows.append(np.full(len(counts), d, np.int32))
        row, col, tf = np.concatenate(rows), np.concatenate(cols), np.concatenate(freqs)
        n = len(docs)
        df = np.bincount(col, minlength=len(self.vocab)).astype(np.float64)
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        idf[idf < 0] = epsilon * idf.mean()
        norm = k1 * (1 - b + b * lengths / lengths.mean())
        weight = idf[col] * tf * (k1 + 1) / (tf + norm[row])
        shape = (n, len(self.vocab))
        self.matrix = csc_matrix((weight.astype(np.float32), (row, col)), shape=shape)

    @property
    def nbytes(self) -> int:
        m = self.matrix
        return int(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes)

    def rank(self, terms: Sequence[str], n: int) -> list[tuple[int, float]]:
        cols = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if not cols:
            return []
        scores = np.asarray(self.matrix[:, cols].sum(axis=1)).ravel()
        k = min(n, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in top if scores[i] > 0]


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
    """``retrieval.search.search_chunks`` for modes keyword / hybrid, with ``keyword`` given."""
    ids = [cid for cid, _ in keyword]
    if hybrid:
        dense = await dense_ranking(
            session, vector, settings.candidates, settings.hnsw_ef_search
        )
        weight = settings.unaccented_dense_weight if lacks_diacritics(query_text) else 1.0
        scores = rrf([dense, ids], settings.rrf_k, [weight, 1.0])
    else:
        dense, scores = [], dict(keyword)
    if not scores:
        return []
    rows = await session.execute(_ROWS_SQL, {"q": _vec(vector), "ids": list(scores)})
    dense_pos = {cid: i for i, cid in enumerate(dense, start=1)}
    kw_pos = {cid: i for i, cid in enumerate(ids, start=1)}
    hits = [
        Hit(**r._mapping, score=scores[r.chunk_id], dense_rank=dense_pos.get(r.chunk_id),
            keyword_rank=kw_pos.get(r.chunk_id))
        for r in rows
    ]
    hits.sort(key=lambda h: (-h.score, h.chunk_id))
    return diversify(hits, settings.max_chunks_per_doc)[:limit]


def mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.0f} MiB" if nbytes >= 2**20 else f"{math.ceil(nbytes / 1024)} KiB"
