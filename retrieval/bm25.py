"""BM25 over the chunks' keyword terms, held in memory (rank-bm25).

The index is rebuilt when the set of chunks changes, which a cheap signature query detects
(chunk ids are never reused, so count and max id change with every insert, replace or delete).
Each process keeps its own copy: fine for the corpora of one university, and measured against
PostgreSQL full-text in docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rank_bm25 import BM25Okapi
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

_SIGNATURE_SQL = text("SELECT count(*), coalesce(max(id), 0), coalesce(sum(id), 0) FROM chunks")
_ROWS_SQL = text("SELECT id, keyword_text FROM chunks ORDER BY id")


@dataclass
class Bm25Index:
    signature: tuple[int, int, int]
    ids: list[int]
    model: BM25Okapi | None

    def rank(self, terms: Sequence[str], n: int) -> list[tuple[int, float]]:
        if self.model is None or not terms:
            return []
        scores = self.model.get_scores(list(dict.fromkeys(terms)))
        top = np.argsort(-scores)[:n]
        return [(self.ids[i], float(scores[i])) for i in top if scores[i] > 0]


_cache: dict[str, Bm25Index] = {}
_lock = asyncio.Lock()


async def bm25_index(session: AsyncSession) -> Bm25Index:
    """The BM25 index of the chunks this session sees, rebuilt only when they changed."""
    row = (await session.execute(_SIGNATURE_SQL)).one()
    signature = (int(row[0]), int(row[1]), int(row[2]))
    key = str(session.bind.engine.url) if session.bind is not None else ""
    async with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.signature == signature:
            return cached
        rows = (await session.execute(_ROWS_SQL)).all()
        ids = [r.id for r in rows]
        corpus = [r.keyword_text.split() or ["_"] for r in rows]
        model = await asyncio.to_thread(BM25Okapi, corpus) if corpus else None
        index = Bm25Index(signature, ids, model)
        _cache[key] = index
        return index


async def bm25_ranking(
    session: AsyncSession, terms: Sequence[str], n: int
) -> list[tuple[int, float]]:
    index = await bm25_index(session)
    return index.rank(terms, n)
