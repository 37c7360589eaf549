"""Keyword search over the chunks' terms: BM25 held in memory, or PostgreSQL full-text.

BM25 over the chunks' keyword terms is held in memory as a sparse term-weight matrix.

The scores are rank-bm25's ``BM25Okapi`` (k1 1.5, b 0.75, negative IDF floored at 0.25 × the
mean IDF; a test checks they agree), but precomputed per (chunk, term) in a scipy CSC matrix, so
a question costs a sum over its terms' columns: ~5 ms at 100,000 chunks, where rank-bm25's
per-document Python loop takes ~1.6 s (docs/benchmarks.md).

The index is rebuilt when the chunks change, which a cheap signature query detects
(retrieval.changes). Each process keeps its own copy.

Full-text ranks with ``ts_rank`` over the same terms, as an OR-tsquery: query terms are limited
to ``[a-z0-9_]`` by retrieval.text.terms (and `or_tsquery` drops any other), so the query cannot
carry operators. ``keyword=auto`` picks between them by the size of the store.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csc_matrix
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.settings import SearchSettings
from retrieval.changes import tables_signature

_TERMS_SQL = text("SELECT id, keyword_text FROM chunks ORDER BY id")


class Bm25Index:
    def __init__(
        self,
        ids: Sequence[int],
        docs: Sequence[Sequence[str]],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        signature: str = "",
    ) -> None:
        self.signature = signature
        self.ids = np.asarray(ids, dtype=np.int64)
        self.vocab: dict[str, int] = {}
        self.matrix: Any = None
        if not docs:
            return
        rows, cols, freqs = [], [], []
        lengths = np.empty(len(docs), dtype=np.float64)
        for d, terms in enumerate(docs):
            counts = Counter(terms)
            lengths[d] = len(terms)
            cols.append(
                np.fromiter(
                    (self.vocab.setdefault(t, len(self.vocab)) for t in counts),
                    np.int64,
                    len(counts),
                )
            )
            freqs.append(np.fromiter(counts.values(), np.float64, len(counts)))
            rows.append(np.full(len(counts), d, np.int64))
        row, col, tf = np.concatenate(rows), np.concatenate(cols), np.concatenate(freqs)
        n = len(docs)
        df = np.bincount(col, minlength=len(self.vocab)).astype(np.float64)
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        idf[idf < 0] = epsilon * idf.mean()
        norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
        weight = idf[col] * tf * (k1 + 1) / (tf + norm[row])
        self.matrix = csc_matrix(
            (weight.astype(np.float32), (row, col)), shape=(n, len(self.vocab))
        )

    @property
    def nbytes(self) -> int:
        m = self.matrix
        return 0 if m is None else int(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes)

    def scores(self, terms: Sequence[str]) -> np.ndarray[Any, Any]:
        """BM25 of every chunk (in ``ids`` order) for the distinct ``terms``."""
        cols = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if self.matrix is None or not cols:
            return np.zeros(len(self.ids), dtype=np.float32)
        return np.asarray(self.matrix[:, cols].sum(axis=1)).ravel()

    def rank(self, terms: Sequence[str], n: int) -> list[tuple[int, float]]:
        return self.search(terms, n).top

    def search(self, terms: Sequence[str], n: int) -> Bm25Result:
        """The ``n`` best chunks, and the scores of every chunk (for fusion)."""
        scores = self.scores(terms)
        k = min(n, len(scores))
        top: list[tuple[int, float]] = []
        if k:
            best = np.argpartition(-scores, k - 1)[:k]
            best = best[np.argsort(-scores[best], kind="stable")]
            top = [(int(self.ids[i]), float(scores[i])) for i in best if scores[i] > 0]
        return Bm25Result(top, self.ids, scores)


@dataclass(frozen=True)
class Bm25Result:
    top: list[tuple[int, float]]
    ids: np.ndarray[Any, Any]  # every chunk id, ascending (the index reads them ORDER BY id)
    all_scores: np.ndarray[Any, Any]

    def scores_of(self, chunk_ids: Sequence[int]) -> dict[int, float]:
        """BM25 of the given chunks; 0 for a chunk the index does not hold (added since)."""
        if not len(self.ids):
            return dict.fromkeys(chunk_ids, 0.0)
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        at = np.clip(np.searchsorted(self.ids, wanted), 0, len(self.ids) - 1)
        found = self.ids[at] == wanted
        return {
            int(c): float(self.all_scores[i]) if ok else 0.0
            for c, i, ok in zip(wanted, at, found, strict=True)
        }


_cache: dict[str, Bm25Index] = {}
_lock = asyncio.Lock()


async def bm25_index(session: AsyncSession) -> Bm25Index:
    """The BM25 index of the chunks this session sees, rebuilt only when they changed."""
    signature = await tables_signature(session, ("chunks",))
    key = str(session.bind.engine.url) if session.bind is not None else ""
    async with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.signature == signature:
            return cached
        rows = (await session.execute(_TERMS_SQL)).all()
        ids = [r.id for r in rows]
        docs = [r.keyword_text.split() or ["_"] for r in rows]
        index = await asyncio.to_thread(Bm25Index, ids, docs, signature=signature)
        _cache[key] = index
        return index


async def bm25_ranking(
    session: AsyncSession, terms: Sequence[str], n: int
) -> list[tuple[int, float]]:
    return (await bm25_search(session, terms, n)).top


async def bm25_search(session: AsyncSession, terms: Sequence[str], n: int) -> Bm25Result:
    index = await bm25_index(session)
    return index.search(terms, n)


# -- full-text ---------------------------------------------------------------------------------

_SAFE_TERM = re.compile(r"^[a-z0-9_]+$")


def or_tsquery(terms: Sequence[str]) -> str:
    """``a | b | c`` for to_tsquery('simple', …); unsafe terms are dropped, not escaped."""
    return " | ".join(t for t in dict.fromkeys(terms) if _SAFE_TERM.match(t))


# ts_rank, not ts_rank_cd: on an OR of many terms the cover density rewards long chunks dense in
# common words ("nganh", "nam"), and normalisation 1 (divide by 1 + log length) keeps long chunks
# from winning on length alone. Document-level MRR@10 (`tuvan eval questions --compare`): full-text
# alone 0.60 -> 0.87 on UIT and 0.46 -> 0.90 on ALQAC, hybrid 0.76 -> 0.89 and 0.72 -> 0.94; and
# ALQAC's keyword search took 11 ms instead of 64 (p50). ts_rank_cd normalisations (1, 32) and
# ts_rank with 2 or 8 were worse, 16 about the same (docs/benchmarks.md).
FTS_SQL = text(
    """
    SELECT c.id, ts_rank(c.tsv, tq, 1) AS kscore
    FROM chunks c, to_tsquery('simple', :tsq) tq
    WHERE c.tsv @@ tq
    ORDER BY kscore DESC, c.id LIMIT :n
    """
)


async def fts_ranking(
    session: AsyncSession, terms: Sequence[str], n: int
) -> list[tuple[int, float]]:
    tsq = or_tsquery(terms)
    if not tsq:
        return []
    rows = await session.execute(FTS_SQL, {"tsq": tsq, "n": n})
    return [(row.id, float(row.kscore)) for row in rows]


_CHUNK_ESTIMATE_SQL = text("SELECT reltuples::bigint FROM pg_class WHERE oid = 'chunks'::regclass")
_CHUNK_COUNT_SQL = text("SELECT count(*) FROM chunks")


async def hybrid_uses_bm25(session: AsyncSession, settings: SearchSettings) -> bool:
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
