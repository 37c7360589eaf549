"""Tier 1: matching a question against published FAQ questions and their variants.

The match is accepted only when the similarity passes ``t_faq``, the near-miss guard finds no
conflict between the question and the matched FAQ question, and no entry with a different
answer comes within ``margin`` of it. The answer itself is never touched here or later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from retrieval.guard import GuardVerdict, NearMissGuard


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
    similarity: float


@dataclass(frozen=True)
class CandidateVerdict:
    candidate: FaqCandidate
    guard: GuardVerdict | None
    accepted: bool
    reason: str


@dataclass(frozen=True)
class FaqDecision:
    accepted: FaqCandidate | None
    verdicts: tuple[CandidateVerdict, ...]
    reason: str

    @property
    def best_similarity(self) -> float:
        return self.verdicts[0].candidate.similarity if self.verdicts else 0.0


# Nearest published questions and nearest published variants, best per entry. HNSW with a
# filter needs iterative scans (pgvector ≥ 0.8) so that drafts do not starve the result.
_CANDIDATES_SQL = text(
    """
    WITH q AS (
        SELECT e.id AS faq_id, e.question AS matched, e.embedding <=> :q AS dist
        FROM faq_entries e
        WHERE e.status = 'published' AND e.embedding IS NOT NULL
        ORDER BY e.embedding <=> :q LIMIT :n
    ), v AS (
        SELECT v.faq_id, v.text AS matched, v.embedding <=> :q AS dist
        FROM faq_variants v JOIN faq_entries e ON e.id = v.faq_id
        WHERE e.status = 'published' AND v.embedding IS NOT NULL
        ORDER BY v.embedding <=> :q LIMIT :n
    ), best AS (
        SELECT DISTINCT ON (faq_id) faq_id, matched, dist
        FROM (SELECT * FROM q UNION ALL SELECT * FROM v) AS both_kinds
        ORDER BY faq_id, dist
    )
    SELECT e.id, e.external_id, e.question, b.matched, e.answer, e.source, e.source_url,
           e.language, 1 - b.dist AS similarity
    FROM best b JOIN faq_entries e ON e.id = b.faq_id
    ORDER BY b.dist, e.id
    LIMIT :k
    """
)


# One round trip for both settings; both last until the end of the transaction.
_HNSW_SETTINGS_SQL = text(
    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.ef_search', '64', true)"
)


async def faq_candidates(
    session: AsyncSession, query_vector: np.ndarray[Any, Any], *, limit: int = 5
) -> list[FaqCandidate]:
    from retrieval.search import _vec

    await session.execute(_HNSW_SETTINGS_SQL)
    rows = await session.execute(
        _CANDIDATES_SQL, {"q": _vec(query_vector), "n": max(limit * 4, 20), "k": limit}
    )
    return [
        FaqCandidate(
            faq_id=r.id,
            external_id=r.external_id,
            question=r.question,
            matched_text=r.matched,
            answer=r.answer,
            source=r.source,
            source_url=r.source_url,
            language=r.language,
            similarity=float(r.similarity),
        )
        for r in rows
    ]


def _same_answer(a: FaqCandidate, b: FaqCandidate) -> bool:
    return " ".join(a.answer.split()) == " ".join(b.answer.split())


def decide_faq(
    question: str,
    candidates: Sequence[FaqCandidate],
    *,
    threshold: float,
    margin: float,
    guard: NearMissGuard | None,
) -> FaqDecision:
    """URAG tier 1 with a near-miss guard and a margin between different answers.

    Candidates are tried best first; one the guard refuses is skipped (a question about another
    major may still match the FAQ entry that is about that major).
    """
    verdicts: list[CandidateVerdict] = []
    accepted: FaqCandidate | None = None
    reason = "no published FAQ entry"
    for cand in candidates:
        if cand.similarity < threshold:
            why = f"similarity {cand.similarity:.3f} below t_faq {threshold:.3f}"
            verdicts.append(CandidateVerdict(cand, None, False, why))
            if accepted is None and reason == "no published FAQ entry":
                reason = why
            continue
        verdict = _guard(guard, question, cand)
        if verdict is not None and not verdict.ok:
            why = f"near-miss guard: {verdict.reason}"
            verdicts.append(CandidateVerdict(cand, verdict, False, why))
            if accepted is None:
                reason = why
            continue
        if accepted is None:
            accepted = cand
            verdicts.append(CandidateVerdict(cand, verdict, True, "accepted"))
            reason = "accepted"
            continue
        if not _same_answer(accepted, cand) and accepted.similarity - cand.similarity < margin:
            why = (
                f"ambiguous: entry {cand.faq_id} with another answer is within "
                f"{margin:.3f} ({cand.similarity:.3f} vs {accepted.similarity:.3f})"
            )
            verdicts.append(CandidateVerdict(cand, verdict, False, why))
            verdicts = [
                CandidateVerdict(v.candidate, v.guard, False, why) if v.accepted else v
                for v in verdicts
            ]
            return FaqDecision(None, tuple(verdicts), why)
        verdicts.append(CandidateVerdict(cand, verdict, False, "lower than the accepted entry"))
    return FaqDecision(accepted, tuple(verdicts), reason)


def _guard(guard: NearMissGuard | None, question: str, cand: FaqCandidate) -> GuardVerdict | None:
    if guard is None:
        return None
    # Check against the entry's question: a variant may be phrased loosely, but the question
    # is what the answer answers.
    return guard.check(question, cand.question)
