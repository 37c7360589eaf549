"""The published FAQ entries' words (question, variants, answer) as BM25 and verbatim keys, kept
per process and rebuilt when the FAQ tables change."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from retrieval.changes import signature_expression
from retrieval.faq.contrasts import learn_contrasts
from retrieval.search.keyword import Bm25Index
from retrieval.text.terms import TextProcessor, tokens

UNKNOWN_WEIGHT = 0.5  # of a question's term that no entry holds, in the coverage
PAIR_WEIGHT = 0.5  # of a two-word term against a word, in the coverage


@dataclass(frozen=True)
class Covering:
    """The terms of a question whose coverage tier 1 weighs, and those of them that come from
    words the guard reads (a major, an attribute, a year...): the guard checks those itself,
    synonyms included ("sđt" and "hotline" are one slot), so they count as held by any entry
    the guard lets through."""

    terms: tuple[str, ...]
    read: frozenset[str] = frozenset()


# An entry past its valid-until date is never answered verbatim (2/4): as if unpublished.
IN_FORCE = "(e.valid_until IS NULL OR e.valid_until >= current_date)"

_ENTRIES_SQL = text(
    "SELECT id, external_id, question, answer, source, source_url, language, embedding "
    "FROM faq_entries e WHERE status = 'published' AND {IN_FORCE} ORDER BY id".replace(
        "{IN_FORCE}", IN_FORCE
    )
)
_VARIANTS_SQL = text(
    "SELECT v.faq_id, v.text, v.embedding FROM faq_variants v "
    "JOIN faq_entries e ON e.id = v.faq_id "
    "WHERE e.status = 'published' AND {IN_FORCE} ORDER BY v.faq_id, v.id".replace(
        "{IN_FORCE}", IN_FORCE
    )
)
# What the documents are about, in their own words: titles and section headings, where a school
# sets its campuses, programmes and rounds apart (retrieval.faq.contrasts).
_HEADINGS_SQL = text(
    "SELECT title FROM documents WHERE title <> '' "
    "UNION SELECT heading_path FROM chunks WHERE heading_path <> '' LIMIT :n"
)
MAX_HEADINGS = 3000

# One round trip for both settings (they last until the end of the transaction) and for the
# signature that tells whether the FAQ lexicon is still current.
_FAQ_TABLES = ("faq_entries", "faq_variants", "documents")
# The columns, for a statement that reads other signatures in the same round trip; its
# ``signature`` then goes to ``current_lexicon``.
SETTINGS_COLUMNS = (
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.ef_search', '64', true), "
    # the date too: an entry's valid-until day passing changes what tier 1 may answer
    f"{signature_expression(_FAQ_TABLES)} || '@' || current_date::text AS signature"
)
_SETTINGS_SQL = text(f"SELECT {SETTINGS_COLUMNS}")


def verbatim_key(question: str) -> str:
    """What two phrasings share when one is the other retyped: folded words, in order."""
    return " ".join(tokens(question))


@dataclass(frozen=True)
class LexiconEntry:
    faq_id: int
    external_id: str | None
    question: str
    answer: str
    source: str | None
    source_url: str | None
    language: str
    variants: tuple[str, ...]


@dataclass(frozen=True)
class StoredVectors:
    """The published entries' stored embeddings (questions and phrasings, as the dense side
    matches them), one row each, for the FAQ's calibration."""

    vectors: np.ndarray[Any, Any]  # float32, (rows, dim), unit length
    owners: tuple[int, ...]  # the entry of each row
    texts: tuple[str, ...]


class FaqLexicon:
    """The published entries' words, in memory: BM25 over each entry's question, variants and
    answer, the document frequencies that weigh a question's coverage, and the verbatim index.
    Rebuilt when the FAQ changes (retrieval.changes)."""

    def __init__(
        self,
        entries: Sequence[LexiconEntry],
        processor: TextProcessor,
        signature: str = "",
        *,
        vectors: StoredVectors | None = None,
        headings: Sequence[str] = (),
        origin: str = "",
    ) -> None:
        self.signature = signature
        self.origin = origin  # the database it was read from (one cache per database)
        self.vectors = vectors
        self.headings = tuple(headings)
        self.contrasts = learn_contrasts(
            [*(t for e in entries for t in (e.question, *e.variants)), *_last_parts(headings)]
        )
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
        self._phrasings: dict[int, tuple[frozenset[str], ...]] = {}
        self.verbatim: dict[str, tuple[int, ...]] = {}
        for e in entries:
            for phrasing in dict.fromkeys(verbatim_key(t) for t in (e.question, *e.variants)):
                if phrasing:
                    self.verbatim[phrasing] = (*self.verbatim.get(phrasing, ()), e.faq_id)

    @property
    def max_idf(self) -> float:
        """The IDF of a term one entry holds: the rarest there is."""
        return math.log(len(self.ids) + 1) or 1.0

    def terms_of(self, faq_id: int) -> frozenset[str]:
        return self.terms.get(faq_id, frozenset())

    def variants_of(self, faq_id: int) -> tuple[str, ...]:
        entry = self.entries.get(faq_id)
        return entry.variants if entry is not None else ()

    def phrasing_words(self, faq_id: int) -> tuple[frozenset[str], ...]:
        """The words of each of the entry's phrasings (its question and variants) as a
        question's are read (question words dropped), single words only; made once."""
        known = self._phrasings.get(faq_id)
        if known is None:
            entry = self.entries.get(faq_id)
            texts = (entry.question, *entry.variants) if entry is not None else ()
            known = tuple(self.question_words(t) for t in texts)
            self._phrasings[faq_id] = known
        return known

    def question_words(self, text: str) -> frozenset[str]:
        """A question's single words as tier 1 weighs them (question words dropped)."""
        return frozenset(t for t in self._processor.query_terms(text) if "_" not in t)

    def term_weight(self, term: str) -> float:
        """A question term's weight in the coverage: its IDF, half for a pair of words."""
        return self.idf(term) * (PAIR_WEIGHT if "_" in term else 1.0)

    def weight_of(self, terms: Sequence[str]) -> float:
        return sum(self.term_weight(t) for t in dict.fromkeys(terms))

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
        weights = {t: self.term_weight(t) for t in dict.fromkeys(terms)}
        total = sum(weights.values())
        if total <= 0:
            return 1.0, ()
        unsaid = tuple(t for t in weights if t not in held)
        return 1.0 - sum(weights[t] for t in unsaid) / total, unsaid


def _stored_vectors(rows: Sequence[tuple[int, str, Any]]) -> StoredVectors | None:
    kept = [(i, t, v) for i, t, v in rows if v is not None]
    if not kept:
        return None
    raw = np.asarray([_vector(v) for _, _, v in kept], dtype=np.float32)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    unit = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return StoredVectors(unit, tuple(i for i, _, _ in kept), tuple(t for _, t, _ in kept))


def _vector(value: Any) -> np.ndarray[Any, Any]:
    """A stored embedding as read through ``text()``: pgvector's text form "[0.1,…]"."""
    if isinstance(value, str):
        return np.array([float(x) for x in value.strip("[]").split(",")], dtype=np.float32)
    return np.asarray(value, dtype=np.float32)


def _last_parts(headings: Sequence[str]) -> list[str]:
    """Each heading path's last part ("Tuyển sinh › Cơ sở phía Nam" → "Cơ sở phía Nam")."""
    return [h.rsplit(" › ", 1)[-1] for h in headings]


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
        signature = str((await session.execute(_SETTINGS_SQL)).one().signature)
    key = _lexicon_key(session, processor)
    async with _lock:
        cached = _lexicons.get(key)
        if cached is not None and cached.signature == signature:
            return cached
        variants: dict[int, list[str]] = {}
        rows: list[tuple[int, str, Any]] = []
        for faq_id, variant, embedding in (await session.execute(_VARIANTS_SQL)).all():
            variants.setdefault(faq_id, []).append(variant)
            rows.append((faq_id, variant, embedding))
        found = (await session.execute(_ENTRIES_SQL)).all()
        rows = [(r.id, r.question, r.embedding) for r in found] + rows
        headings = [h for (h,) in await session.execute(_HEADINGS_SQL, {"n": MAX_HEADINGS})]
        entries = [
            LexiconEntry(
                r.id,
                r.external_id,
                r.question,
                r.answer,
                r.source,
                r.source_url,
                r.language,
                tuple(variants.get(r.id, ())),
            )
            for r in found
        ]
        lexicon = await asyncio.to_thread(
            FaqLexicon,
            entries,
            processor,
            signature,
            vectors=_stored_vectors(rows),
            headings=headings,
            origin=key,
        )
        _lexicons[key] = lexicon
        return lexicon


async def current_lexicon(
    session: AsyncSession, processor: TextProcessor, *, signature: str | None = None
) -> FaqLexicon:
    """The HNSW settings for this transaction and the FAQ lexicon, checked against the tables'
    signature in the same round trip. ``signature``: read with ``SETTINGS_COLUMNS`` by the
    caller in this transaction (which set the HNSW settings too)."""
    if signature is None:
        signature = str((await session.execute(_SETTINGS_SQL)).one().signature)
    return await faq_lexicon(session, processor, signature)
