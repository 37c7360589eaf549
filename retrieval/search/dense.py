"""Dense search: pgvector's approximate nearest neighbours by cosine, and exact cosines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession


def vector_literal(v: np.ndarray[Any, Any]) -> str:
    """pgvector's text form; bound as a parameter and cast by the ``<=>`` operator."""
    return "[" + ",".join(f"{x:.6f}" for x in np.asarray(v, dtype=np.float32).ravel()) + "]"


DENSE_SQL = text(
    """
    SELECT id, 1 - (embedding <=> :q) AS similarity
    FROM chunks WHERE embedding IS NOT NULL
    ORDER BY embedding <=> :q LIMIT :n
    """
)


async def set_ef_search(session: AsyncSession, value: int) -> None:
    await session.execute(
        text("SELECT set_config('hnsw.ef_search', :v, true)"), {"v": str(int(value))}
    )


async def dense_ranking(
    session: AsyncSession, query_vector: np.ndarray[Any, Any], n: int, ef_search: int
) -> list[tuple[int, float]]:
    """The ``n`` nearest chunks with their cosine to the question."""
    await set_ef_search(session, max(ef_search, n))
    rows = await session.execute(DENSE_SQL, {"q": vector_literal(query_vector), "n": n})
    return [(row.id, float(row.similarity)) for row in rows]


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
    rows = await session.execute(
        _SIMILARITY_SQL, {"q": vector_literal(query_vector), "ids": list(chunk_ids)}
    )
    return {row.id: float(row.similarity) for row in rows}
