"""What tier 1's scorer weighs about each candidate entry, and what rules one out (1/4).

A candidate is **ruled out** when it cannot be the answer whatever its scores:

- the near-miss guard finds a conflict (another major, year, programme…) or a slot the
  question asks that the entry never says (retrieval.guard);
- the question names a value the school's own FAQ sets apart after some word (a campus, an
  ordinal, a kind of programme: ``retrieval.faq.contrasts``) and the entry's question names
  another value there.

The rest are weighed by ``FEATURES``, each a number where more means likelier right (``UP``) or
likelier wrong (``DOWN``); the scorer (``retrieval.decisions``) turns them into a probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.faq.candidates import FaqCandidate
from retrieval.faq.contrasts import Contrasts, Value, contrast_words
from retrieval.faq.lexicon import Covering, FaqLexicon
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets, GuardVerdict

# More is likelier right.
UP = (
    "similarity",  # dense cosine of the entry's nearest question or phrasing
    "coverage",  # IDF-weighted share of the question's words the entry holds
    "dense_gap",  # its similarity's lead over the next entry's
    "score_gap",  # its fused score's lead over the best entry with another answer
    "keyword",  # its BM25 score as a share of the best entry's
)
# More is likelier wrong.
DOWN = (
    "rival_said",  # share of the question's words it lacks that an entry with another answer has
    "contrast_unsaid",  # values the question names after a contrast head that the entry never says
    # The rarest word of the question the entry lacks, as a share of the rarest possible: one
    # unsaid "IELTS" or "bút chì" makes another question even when most words are held.
    "unsaid_rare",
    # The reverse: the share of the entry's own question (its closest phrasing) the question
    # never says, IDF-weighted, and the rarest such word. An entry more specific than the
    # question ("cơ sở Hải Dương có ngành cơ khí không" for "ngành cơ khí học ở đâu") answers
    # another question however well it holds the question's words.
    "entry_unasked",
    "entry_unasked_rare",
)
FEATURES = UP + DOWN


@dataclass(frozen=True)
class Evidence:
    """One candidate weighed: its features (in ``FEATURES`` order) or why it is ruled out."""

    candidate: FaqCandidate
    values: tuple[float, ...]
    guard: GuardVerdict | None = None
    contrast: tuple[tuple[str, Value, Value], ...] = ()  # (head, asked, the entry's)

    @property
    def ruled_out(self) -> bool:
        return (self.guard is not None and not self.guard.ok) or bool(self.contrast)

    def feature(self, name: str) -> float:
        return self.values[FEATURES.index(name)]


def _same_answer(a: FaqCandidate, b: FaqCandidate) -> bool:
    return " ".join(a.answer.split()) == " ".join(b.answer.split())


def weigh_candidates(
    question: str,
    covering: Covering,
    candidates: Sequence[FaqCandidate],
    lexicon: FaqLexicon,
    guard: NearMissGuard | None,
    contrasts: Contrasts,
    facets: Facets | None = None,
) -> list[Evidence]:
    """Each candidate's evidence. ``question`` is the question as the guard reads it
    (restored, shorthand written out; ``facets``: what ``guard`` reads in it, when the caller
    has read it), ``covering`` its words whose coverage is weighed."""
    if guard is not None and facets is None:
        facets = guard.facets(question)  # read once, for every candidate
    total = lexicon.weight_of(covering.terms) or 1.0
    asked_values = contrasts.named(contrast_words(question))
    asked_words = lexicon.question_words(question) | covering.read
    out = []
    for cand in candidates:
        rivals = [c for c in candidates if c.faq_id != cand.faq_id and not _same_answer(c, cand)]
        rival_score = max((c.score for c in rivals), default=0.0)
        held_by_rivals = frozenset().union(*(lexicon.terms_of(c.faq_id) for c in rivals))
        weights = {t: lexicon.term_weight(t) for t in cand.unsaid}
        rival_said = sum(w for t, w in weights.items() if t in held_by_rivals) / total
        entry_words = contrast_words("\n".join((cand.question, *lexicon.variants_of(cand.faq_id))))
        said_words = [*entry_words, *contrast_words(cand.answer)]
        verdict = (
            guard.check(question, cand.question, cand.answer, mine=facets)
            if guard is not None
            else None
        )
        conflicts = tuple(
            (head, asked, theirs)
            for head, asked in contrasts.conflicts(asked_values, entry_words)
            for theirs in sorted(contrasts.named(entry_words).get(head, ()))
        )
        rare = max((lexicon.idf(t) for t in cand.unsaid if "_" not in t), default=0.0)
        unasked, unasked_rare = _unasked(lexicon, cand.faq_id, asked_words)
        values = (
            cand.similarity,
            cand.coverage,
            cand.dense_gap,
            cand.score - rival_score,
            cand.keyword_share,
            rival_said,
            float(len(contrasts.unsaid(asked_values, said_words))),
            rare / lexicon.max_idf,
            unasked,
            unasked_rare / lexicon.max_idf,
        )
        out.append(Evidence(cand, values, verdict, conflicts))
    return out


def _unasked(lexicon: FaqLexicon, faq_id: int, asked: frozenset[str]) -> tuple[float, float]:
    """Of the entry's phrasing closest to the question: the IDF-weighted share of its words
    the question does not say, and the IDF of the rarest of them (0, 0 for no phrasing)."""
    best: tuple[float, float] | None = None
    for words in lexicon.phrasing_words(faq_id):
        missing = words - asked
        total = sum(lexicon.idf(t) for t in words) or 1.0
        found = (
            sum(lexicon.idf(t) for t in missing) / total,
            max((lexicon.idf(t) for t in missing), default=0.0),
        )
        best = found if best is None else min(best, found)
    return best if best is not None else (0.0, 0.0)
