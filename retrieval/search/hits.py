"""A search hit, the chunk rows behind it, and the orderings every search mode applies last."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession

from retrieval.search.dense import vector_literal


@dataclass(frozen=True)
class Hit:
    """One ranked chunk with what an answer cites of it and how each ranker placed it."""

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
    # The year its document speaks of (documents.year), named beside its citation.
    year: int | None = None


_ROW_COLUMNS = """
    c.id AS chunk_id, c.document_id, c.text, c.heading_path, c.page, c.ordinal, c.external_id,
    d.title, d.source, d.url, d.year, 1 - (c.embedding <=> :q) AS similarity
"""

_ROWS_SQL = text(
    f"""
    SELECT {_ROW_COLUMNS}
    FROM chunks c JOIN documents d ON d.id = c.document_id
    WHERE c.id = ANY(:ids)
    """  # noqa: S608 - constant column list
).bindparams(bindparam("ids"))


async def load_hits(
    session: AsyncSession,
    query_vector: np.ndarray[Any, Any],
    scores: dict[int, float],
    dense: Sequence[int],
    keyword: Sequence[int],
) -> list[Hit]:
    """The ranked chunks as hits, best score first, with their cosine to the question."""
    if not scores:
        return []
    rows = await session.execute(
        _ROWS_SQL, {"q": vector_literal(query_vector), "ids": list(scores)}
    )
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
