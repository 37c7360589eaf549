"""Tier 1: matching a question against published FAQ entries.

Candidates (``faq_candidates``) come from two rankers, fused as tier 2 fuses them
(retrieval.fusion.score_fusion): the dense search of the question as read
(retrieval.query: restored, expanded) against the entries' questions and variants, and BM25
over each entry's folded words (question, variants and answer: the answer is where the thing
asked is said). A stored question or variant asked verbatim (same folded words) is a candidate
with similarity 1.

The best candidate the near-miss guard lets through (retrieval.guard: no conflict, every asked
slot said by the entry) is accepted when

- its dense similarity reaches ``t_faq``;
- the question's words are covered by the entry (``coverage``: the IDF-weighted share of the
  question's keyword terms that the entry's question, variants or answer hold, IDF over the
  published entries; the words the guard reads count as held, the guard checks those slots
  itself) at least ``min_coverage``: a question that adds a subject the entry never mentions
  ("giảng viên" where the entry is about students) is another question. Staff phrasings count
  here (their words are how students ask) but not for the guard's slots, which the entry's
  question or answer must say;
- no entry with another answer comes within ``margin`` of it on the fused score.

A verbatim match is accepted unless an entry with another answer holds the same phrasing. The
answer itself is never touched here or later.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from retrieval.bm25 import Bm25Index
from retrieval.changes import signature_expression, tables_signature
from retrieval.fusion import score_fusion
from retrieval.guard import GuardVerdict, NearMissGuard
from retrieval.text import TextProcessor, tokens

POOL = 20  # candidates each ranker brings
KEYWORD_WEIGHT = 0.5  # of BM25 in the fused score (docs/benchmarks.md, tier 1)
UNKNOWN_WEIGHT = 0.5  # of a question's term that no entry holds, in the coverage
PAIR_WEIGHT = 0.5  # of a two-word term against a word, in the coverage


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
# filter needs iterative scans (pgvector >= 0.8) so that drafts do not starve the result.
_DENSE_SQL = text(
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
    SELECT e.id, e.external_id, e.question, e.answer, e.source, e.source_url, e.language,
           b.matched, 1 - b.dist AS similarity
    FROM best b JOIN faq_entries e ON e.id = b.faq_id
    ORDER BY b.dist, e.id
    LIMIT :n
    """
)

_CURRENT_SQL = text(
    "SELECT id, external_id, question, answer, source, source_url, language "
    "FROM faq_entries WHERE id = ANY(:ids) AND status = 'published'"
)
_ENTRIES_SQL = text(
    "SELECT id, external_id, question, answer, source, source_url, language "
    "FROM faq_entries WHERE status = 'published' ORDER BY id"
)
_VARIANTS_SQL = text(
    "SELECT v.faq_id, v.text FROM faq_variants v JOIN faq_entries e ON e.id = v.faq_id "
    "WHERE e.status = 'published' ORDER BY v.faq_id, v.id"
)

# One round trip for both settings (they last until the end of the transaction) and for the
# signature that tells whether the FAQ lexicon is still current.
_FAQ_TABLES = ("faq_entries", "faq_variants")
_SETTINGS_SQL = text(
    "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.ef_search', '64', true), "
    f"{signature_expression(_FAQ_TABLES)} AS signature"
)


def verbatim_key(question: str) -> str:
    """What two phrasings share when one is the other retyped: folded words, in order."""
    return " ".join(tokens(question))


@dataclass(frozen=True)
class _Entry:
    faq_id: int
    external_id: str | None
    question: str
    answer: str
    source: str | None
    source_url: str | None
    language: str
    variants: tuple[str, ...]


class FaqLexicon:
    """The published entries' words, in memory: BM25 over each entry's question, variants and
    answer, the document frequencies that weigh a question's coverage, and the verbatim index.
    Rebuilt when the FAQ changes (retrieval.changes)."""

    def __init__(
        self, entries: Sequence[_Entry], processor: TextProcessor, signature: str = ""
    ) -> None:
        self.signature = signature
        self._processor = processor
        self.entries = {e.faq_id: e for e in entries}
        self.ids = [e.faq_id for e in entries]
        docs = [
            processor.doc_terms("\n".join((e.question, *e.variants, e.answer))) or ["_"]
            for e in entries
        ]
        self.bm25 = Bm25Index(self.ids, docs)
        self.terms = {e.faq_id: frozenset(d) for e, d in zip(entries, docs, strict=True)}
        self.df: dict[str, int] = {}
        for d in self.terms.values():
            for t in d:
                self.df[t] = self.df.get(t, 0) + 1
        self.verbatim: dict[str, tuple[int, ...]] = {}
        for e in entries:
            for phrasing in dict.fromkeys(verbatim_key(t) for t in (e.question, *e.variants)):
                if phrasing:
                    self.verbatim[phrasing] = (*self.verbatim.get(phrasing, ()), e.faq_id)

    def _changed(self, faq_id: int, current: Any) -> bool:
        known = self.entries.get(faq_id)
        return known is None or (known.question, known.answer) != (current.question, current.answer)

    def idf(self, term: str) -> float:
        """log((N + 1) / df) for a term some entry holds. A term no entry holds is as likely a
        filler of chat ("sợ quá", a typo) as a subject the FAQ never covers: it weighs
        ``UNKNOWN_WEIGHT``, about what a term half the entries hold weighs."""
        df = self.df.get(term)
        return math.log((len(self.ids) + 1) / df) if df else UNKNOWN_WEIGHT

    def coverage(
        self, covering: Covering, faq_id: int, current: Any = None
    ) -> tuple[float, tuple[str, ...]]:
        """The IDF-weighted share of the question's terms the entry holds (its words, and the
        words the guard reads), and the terms it does not hold. ``current`` (a row with its
        question and answer) reads the words of an entry changed since the lexicon was built."""
        terms = covering.terms
        words = self.terms.get(faq_id, frozenset())
        if current is not None and self._changed(faq_id, current):
            variants = self.entries[faq_id].variants if faq_id in self.entries else ()
            text = "\n".join((current.question, *variants, current.answer))
            words = frozenset(self._processor.doc_terms(text))
        held = words | covering.read
        # A pair of words ("khoa_luan") counts half: its words count on their own already, and
        # a paraphrase reorders words more often than it changes them.
        weights = {
            t: self.idf(t) * (PAIR_WEIGHT if "_" in t else 1.0) for t in dict.fromkeys(terms)
        }
        total = sum(weights.values())
        if total <= 0:
            return 1.0, ()
        unsaid = tuple(t for t in weights if t not in held)
        return 1.0 - sum(weights[t] for t in unsaid) / total, unsaid


def _lexicon_key(session: AsyncSession, processor: TextProcessor) -> str:
    return f"{session.bind.engine.url if session.bind is not None else ''}#{id(processor)}"


_lexicons: dict[str, FaqLexicon] = {}
_lock = asyncio.Lock()


async def faq_lexicon(
    session: AsyncSession, processor: TextProcessor, signature: str | None = None
) -> FaqLexicon:
    """The lexicon of the FAQ this session sees, rebuilt only when the FAQ changed
    (``signature``: the FAQ tables' signature, when the caller read it already)."""
    if signature is None:
        signature = await tables_signature(session, _FAQ_TABLES)
    key = _lexicon_key(session, processor)
    async with _lock:
        cached = _lexicons.get(key)
        if cached is not None and cached.signature == signature:
            return cached
        variants: dict[int, list[str]] = {}
        for faq_id, variant in (await session.execute(_VARIANTS_SQL)).all():
            variants.setdefault(faq_id, []).append(variant)
        entries = [
            _Entry(
                r.id,
                r.external_id,
                r.question,
                r.answer,
                r.source,
                r.source_url,
                r.language,
                tuple(variants.get(r.id, ())),
            )
            for r in (await session.execute(_ENTRIES_SQL)).all()
        ]
        lexicon = await asyncio.to_thread(FaqLexicon, entries, processor, signature)
        _lexicons[key] = lexicon
        return lexicon


@dataclass(frozen=True)
class Covering:
    """The terms of a question whose coverage tier 1 weighs, and those of them that come from
    words the guard reads (a major, an attribute, a year...): the guard checks those itself,
    synonyms included ("sđt" and "hotline" are one slot), so they count as held by any entry
    the guard lets through."""

    terms: tuple[str, ...]
    read: frozenset[str] = frozenset()


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
) -> list[FaqCandidate]:
    """The ``limit`` best published entries for a question: dense and BM25 fused, a verbatim
    match first. ``question`` is the question as typed (for the verbatim match), ``terms`` its
    keyword terms, ``query_vector`` the embedded question as read, ``covering`` the terms whose
    coverage is weighed (``coverage_terms``; ``terms`` if not given)."""
    from retrieval.search import _vec

    lexicon = await _current_lexicon(session, processor)
    q = _vec(query_vector)
    rows = {r.id: r for r in await session.execute(_DENSE_SQL, {"q": q, "n": POOL})}
    dense_top = {i: float(r.similarity) for i, r in rows.items()}
    keyword = lexicon.bm25.search(terms, POOL)
    keyword_top = dict(keyword.top)
    verbatim = set(lexicon.verbatim.get(verbatim_key(question), ()))
    # An entry only the keyword side brought is beyond the dense side's nearest: its
    # similarity counts as 0 (it could not reach t_faq), its keyword score still ranks it.
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
    # The texts come from the rows as stored now, never from the lexicon's copy: the lexicon
    # learns of an edit within seconds, the answer a student gets must be the one staff just
    # saved. A verbatim match beyond the dense rows (rare) is read; an entry only the keyword
    # side brought keeps the lexicon's copy, which can rank it but never answer (similarity 0).
    missing = [i for i in order if i in verbatim and i not in rows]
    if missing:
        rows.update({r.id: r for r in await session.execute(_CURRENT_SQL, {"ids": missing})})
    out = []
    for i in order:
        row: Any = rows.get(i)
        if row is None:
            row = lexicon.entries.get(i)
            if row is None or i in verbatim:  # unpublished since, or gone
                continue
        similarity = float(row.similarity) if i in dense_top else 0.0
        matched = row.matched if i in dense_top else row.question
        if i in verbatim:
            similarity, matched = 1.0, question
        coverage, unsaid = lexicon.coverage(covering or Covering(tuple(terms)), i, row)
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
            )
        )
    return out


async def _current_lexicon(session: AsyncSession, processor: TextProcessor) -> FaqLexicon:
    """The HNSW settings for this transaction and the FAQ lexicon, checked against the tables'
    signature in the same round trip."""
    row = (await session.execute(_SETTINGS_SQL)).one()
    return await faq_lexicon(session, processor, str(row.signature))


def _same_answer(a: FaqCandidate, b: FaqCandidate) -> bool:
    return " ".join(a.answer.split()) == " ".join(b.answer.split())


def decide_faq(
    question: str,
    candidates: Sequence[FaqCandidate],
    *,
    threshold: float,
    margin: float,
    guard: NearMissGuard | None,
    min_coverage: float = 0.0,
) -> FaqDecision:
    """URAG tier 1: the best candidate the guard lets through, if it is sure enough.

    Candidates come best first (``faq_candidates``). One the guard refuses is skipped: a
    question about another major may still match the entry about that major. The first one it
    lets through is accepted or nothing is (see the module docstring for the three tests).
    """
    verdicts: list[CandidateVerdict] = []
    reason = "no published FAQ entry"
    for n, cand in enumerate(candidates):
        if cand.verbatim:
            rival = _rival(cand, candidates, verbatim_only=True)
            if rival is None:
                verdicts.append(CandidateVerdict(cand, None, True, "asked verbatim"))
                return _decided(cand, verdicts, candidates[n + 1 :], "asked verbatim")
            why = f"entry {rival.faq_id} with another answer has the same phrasing"
            verdicts.append(CandidateVerdict(cand, None, False, why))
            reason = why
            continue
        verdict = _guard(guard, question, cand)
        if verdict is not None and not verdict.ok:
            why = f"near-miss guard: {verdict.reason}"
            verdicts.append(CandidateVerdict(cand, verdict, False, why))
            reason = why
            continue
        why = _doubt(cand, candidates, threshold, margin, min_coverage)
        if why:
            verdicts.append(CandidateVerdict(cand, verdict, False, why))
            rest = [
                CandidateVerdict(c, None, False, "lower than the entry considered")
                for c in candidates[n + 1 :]
            ]
            return FaqDecision(None, tuple(verdicts + rest), why)
        verdicts.append(CandidateVerdict(cand, verdict, True, "accepted"))
        return _decided(cand, verdicts, candidates[n + 1 :], "accepted")
    return FaqDecision(None, tuple(verdicts), reason)


def _doubt(
    cand: FaqCandidate,
    candidates: Sequence[FaqCandidate],
    threshold: float,
    margin: float,
    min_coverage: float,
) -> str:
    """Why the first candidate the guard lets through is not sure enough, or ""."""
    if cand.similarity < threshold:
        return f"similarity {cand.similarity:.3f} below t_faq {threshold:.3f}"
    if cand.coverage < min_coverage:
        unsaid = ", ".join(cand.unsaid[:6])
        return (
            f"the entry covers {cand.coverage:.2f} of the question's words "
            f"(below {min_coverage:.2f}); not in it: {unsaid}"
        )
    rival = _rival(cand, candidates)
    if rival is not None and cand.score - rival.score < margin:
        return (
            f"ambiguous: entry {rival.faq_id} with another answer is within {margin:.3f} "
            f"({rival.score:.3f} vs {cand.score:.3f})"
        )
    return ""


def _rival(
    cand: FaqCandidate, candidates: Sequence[FaqCandidate], *, verbatim_only: bool = False
) -> FaqCandidate | None:
    """The best other candidate with another answer (verbatim ones only, if asked)."""
    return next(
        (
            c
            for c in candidates
            if c.faq_id != cand.faq_id
            and not _same_answer(c, cand)
            and (c.verbatim or not verbatim_only)
        ),
        None,
    )


def _decided(
    cand: FaqCandidate,
    verdicts: list[CandidateVerdict],
    rest: Sequence[FaqCandidate],
    reason: str,
) -> FaqDecision:
    lower = [CandidateVerdict(c, None, False, "lower than the accepted entry") for c in rest]
    return FaqDecision(cand, tuple(verdicts + lower), reason)


def _guard(guard: NearMissGuard | None, question: str, cand: FaqCandidate) -> GuardVerdict | None:
    if guard is None:
        return None
    # Conflicts are read against the entry's question (a variant may be phrased loosely, but
    # the question is what the answer answers); asked slots against its question and answer.
    return guard.check(question, cand.question, cand.answer)
