"""Tier 1's candidates: the dense and BM25 rankings of the published entries, fused, with each
candidate's coverage of the question's words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from retrieval.faq.lexicon import IN_FORCE, Covering, FaqLexicon, current_lexicon, verbatim_key
from retrieval.guard.checks import NearMissGuard
from retrieval.search.dense import vector_literal
from retrieval.search.fusion import score_fusion
from retrieval.text.terms import TextProcessor

POOL = 20  # candidates each ranker brings
KEYWORD_WEIGHT = 0.5  # of BM25 in the fused score (docs/benchmarks.md, tier 1)


@dataclass(frozen=True)
class FaqCandidate:
    faq_id: int
    external_id: str | None
    question: str  # the entry's question
    matched_text: str  # the question or the variant that matched
    answer: str
    source: str | None
    source_url: str | None
    language: str
    similarity: float  # dense cosine of the nearest of its question and variants; 1 verbatim
    score: float = 0.0  # fused (dense and BM25), what candidates are ordered by
    coverage: float = 1.0  # IDF-weighted share of the question's terms the entry holds
    unsaid: tuple[str, ...] = ()  # the question's terms the entry does not hold
    verbatim: bool = False  # a stored question or variant asked word for word
    # How far its similarity is ahead of the next entry's (negative: behind the nearest one)
    # and its BM25 score as a share of the best entry's: what the FAQ scorer weighs beside the
    # similarity, since both say how much this entry stands out from the rest of this FAQ.
    dense_gap: float = 0.0
    keyword_share: float = 0.0


# Nearest published questions and nearest published variants, best per entry. HNSW with a
# filter needs iterative scans (pgvector >= 0.8) so that drafts do not starve the result.
FAQ_DENSE_SQL = text(
    """
    WITH q AS (
        SELECT e.id AS faq_id, e.question AS matched, e.embedding <=> :q AS dist
        FROM faq_entries e
        WHERE e.status = 'published' AND e.embedding IS NOT NULL AND {IN_FORCE}
        ORDER BY e.embedding <=> :q LIMIT :n
    ), v AS (
        SELECT v.faq_id, v.text AS matched, v.embedding <=> :q AS dist
        FROM faq_variants v JOIN faq_entries e ON e.id = v.faq_id
        WHERE e.status = 'published' AND v.embedding IS NOT NULL AND {IN_FORCE}
        ORDER BY v.embedding <=> :q LIMIT :n
    ), best AS (
        SELECT DISTINCT ON (faq_id) faq_id, matched, dist
        FROM (SELECT * FROM q UNION ALL SELECT * FROM v) AS both_kinds
        ORDER BY faq_id, dist
    )
    SELECT e.id, e.external_id, e.question, e.answer, e.source, e.source_url, e.language,
           b.matched, 1 - b.dist AS similarity
    FROM best b JOIN faq_entries e ON e.id = b.faq_id
    ORDER BY b.dist, e.id
    LIMIT :n
    """.replace("{IN_FORCE}", IN_FORCE)
)

_CURRENT_SQL = text(
    "SELECT id, external_id, question, answer, source, source_url, language "
    "FROM faq_entries e WHERE id = ANY(:ids) AND status = 'published' AND " + IN_FORCE
)


def coverage_terms(
    readable: str, processor: TextProcessor, guard: NearMissGuard | None
) -> Covering:
    """``Covering`` of a question: its keyword terms, an abbreviation by its written-out words
    only, numbers left to the guard."""
    shorthand = processor.abbreviations()

    def terms(text: str) -> list[str]:
        return [
            t
            for t in processor.query_terms(text)
            if t not in shorthand and not any(c.isdigit() for c in t)
        ]

    every = terms(readable)
    if guard is None:
        return Covering(tuple(every))
    unread = set(terms(guard.unread(readable)))
    return Covering(tuple(every), frozenset(t for t in every if t not in unread))


async def faq_candidates(
    session: AsyncSession,
    processor: TextProcessor,
    question: str,
    terms: Sequence[str],
    query_vector: np.ndarray[Any, Any],
    *,
    limit: int = 5,
    covering: Covering | None = None,
    lexicon: FaqLexicon | None = None,
) -> list[FaqCandidate]:
    """The ``limit`` best published entries for a question: dense and BM25 fused, a verbatim
    match first. ``question`` is the question as typed (for the verbatim match), ``terms`` its
    keyword terms, ``query_vector`` the embedded question as read, ``covering`` the terms whose
    coverage is weighed (``coverage_terms``; ``terms`` if not given), ``lexicon`` the one
    ``current_lexicon`` gave this transaction, if the caller read it."""
    if lexicon is None:
        lexicon = await current_lexicon(session, processor)
    q = vector_literal(query_vector)
    rows = {r.id: r for r in await session.execute(FAQ_DENSE_SQL, {"q": q, "n": POOL})}
    verbatim = set(lexicon.verbatim.get(verbatim_key(question), ()))
    missing = [i for i in verbatim if i not in rows]
    if missing:  # a verbatim match beyond the dense rows (rare) is read as stored now
        rows.update({r.id: r for r in await session.execute(_CURRENT_SQL, {"ids": missing})})
    dense = {
        i: DenseMatch(r.matched, float(r.similarity)) for i, r in rows.items() if i not in missing
    }
    return rank_candidates(
        lexicon, rows, dense, terms, verbatim, question, limit=limit, covering=covering
    )


@dataclass(frozen=True)
class DenseMatch:
    matched: str  # the entry's question or variant nearest the question
    similarity: float


def rank_candidates(
    lexicon: FaqLexicon,
    rows: Mapping[int, Any],
    dense: Mapping[int, DenseMatch],
    terms: Sequence[str],
    verbatim: set[int],
    question: str,
    *,
    limit: int,
    covering: Covering | None = None,
    without: int | None = None,
) -> list[FaqCandidate]:
    """The dense ranking (``dense``: each entry's nearest text) and BM25 over ``lexicon`` fused
        into the ``limit`` best candidates, a verbatim match first. ``rows`` hold the entries' texts
        as stored now (the lexicon's copy answers for an entry only the keyword side brought, which
        can rank but never answer). Used live on the database's rows and by the FAQ's calibration
        on the lexicon's own vectors (``retrieval.faq.calibration``), which leaves one entry out
    (``without``) as if it were not published."""
    dense_top = {i: m.similarity for i, m in dense.items() if i != without}
    keyword = lexicon.bm25.search(terms, POOL + 1)
    keyword_top = {i: s for i, s in keyword.top if i != without}
    # An entry only the keyword side brought is beyond the dense side's nearest: its
    # similarity counts as 0 (it could not stand out), its keyword score still ranks it.
    pool = {*dense_top, *keyword_top, *verbatim}
    if not pool:
        return []
    keyword_all = keyword.scores_of(list(pool))
    fused = score_fusion(
        keyword_top,
        dense_top,
        keyword_all,
        {i: dense_top.get(i, 0.0) for i in pool},
        KEYWORD_WEIGHT,
    )
    for i in pool - fused.keys():
        fused[i] = 0.0
    order = sorted(pool, key=lambda i: (i not in verbatim, -fused[i], i))[:limit]
    best_keyword = max(keyword_top.values(), default=0.0)
    ranked_dense = sorted(dense_top.values(), reverse=True)
    out = []
    for i in order:
        row: Any = rows.get(i)
        if row is None:
            row = lexicon.entries.get(i)
            if row is None or i in verbatim:  # unpublished since, or gone
                continue
        similarity = dense_top.get(i, 0.0)
        matched = dense[i].matched if i in dense else row.question
        if i in verbatim:
            similarity, matched = 1.0, question
        coverage, unsaid = lexicon.coverage(covering or Covering(tuple(terms)), i, row)
        gap = _lead(dense_top.get(i, 0.0), ranked_dense)
        out.append(
            FaqCandidate(
                faq_id=i,
                external_id=row.external_id,
                question=row.question,
                matched_text=matched,
                answer=row.answer,
                source=row.source,
                source_url=row.source_url,
                language=row.language,
                similarity=similarity,
                score=fused[i],
                coverage=coverage,
                unsaid=unsaid,
                verbatim=i in verbatim,
                dense_gap=gap,
                keyword_share=keyword_all.get(i, 0.0) / best_keyword if best_keyword else 0.0,
            )
        )
    return out


def _lead(own: float, ranked: Sequence[float]) -> float:
    """``own`` against the best other similarity of ``ranked`` (descending, ``own`` among them
    when the entry was in the dense rows)."""
    if not ranked:
        return 0.0
    if own >= ranked[0]:
        return own - (ranked[1] if len(ranked) > 1 else 0.0)
    return own - ranked[0]
