"""How sure tier 1 must be in *this* FAQ before it answers verbatim (1/4).

A probability that holds in one school's FAQ does not hold in another's: where entries are
close to each other (a regulations FAQ with an entry per programme, a fan page's FAQ with
several entries on applying online), a wrong entry scores as high as a right one does
elsewhere. The FAQ itself says how close its entries are. Each entry's question is asked with
that entry taken away, as if it were not published: whatever tier 1 would then answer is wrong
by construction. The best probability any other entry gets for it is one *calibration score*;
an operating point (``retrieval.decisions.OperatingPoint``) sets the threshold at a level of
these scores (the fitted level of its risk target), never below its fitted floor. And an entry
that took another entry's question with some probability needs more than that to answer: the
threshold is per entry where the FAQ shows an entry attracts questions that are not its own.

Everything runs on the lexicon's stored vectors and BM25 index, in memory: no question is
embedded again, and a 1,000-entry FAQ is calibrated in well under a second per process
whenever it changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from retrieval.decisions.scorer import MonotoneScorer
from retrieval.decisions.store import OperatingPoint
from retrieval.faq.candidates import POOL, DenseMatch, coverage_terms, rank_candidates
from retrieval.faq.features import weigh_candidates
from retrieval.faq.lexicon import FaqLexicon
from retrieval.guard.checks import NearMissGuard
from retrieval.text.terms import TextProcessor

CANDIDATES = 8  # as many as the evaluation weighs
MIN_SCORES = 5  # fewer entries than this: the floor alone (a quantile of three says nothing)


@dataclass(frozen=True)
class Calibration:
    scores: tuple[float, ...] = ()  # sorted ascending
    # Per entry (its id): the highest probability it got as the answer to another's question.
    attracted: Mapping[int, float] = field(default_factory=dict)

    def threshold(self, point: OperatingPoint, faq_id: int | None = None) -> float:
        """The threshold ``point`` sets for this FAQ: the ``quantile``-quantile of its scores,
        or for a level past 1 the highest score moved that share of the way to certainty
        (1.5: halfway from the highest score to 1); never below ``point.threshold``; and for
        ``faq_id``, never below what that entry got for a question not its own."""
        own = self.attracted.get(faq_id, 0.0) if faq_id is not None else 0.0
        if point.quantile is None or len(self.scores) < MIN_SCORES:
            return max(point.threshold, own)
        level = point.quantile
        if level <= 1.0:
            at = float(np.quantile(self.scores, level))
        else:
            top = self.scores[-1]
            at = top + min(level - 1.0, 1.0) * (1.0 - top)
        return max(point.threshold, at, own)


def calibrate(
    lexicon: FaqLexicon,
    processor: TextProcessor,
    guard: NearMissGuard | None,
    scorer: MonotoneScorer,
) -> Calibration:
    """This FAQ's calibration scores for ``scorer``."""
    return scores_of(scorer, calibration_evidence(lexicon, processor, guard))


Evidence = Sequence[Sequence[tuple[int, Sequence[float]]]]


def scores_of(scorer: MonotoneScorer, evidence: Evidence) -> Calibration:
    """The calibration from ``calibration_evidence``: for each entry's question, the best
    probability the scorer gives another entry (0 when every other one is ruled out), and for
    each entry the best it got as such a wrong answer."""
    out: list[float] = []
    attracted: dict[int, float] = {}
    for rows in evidence:
        if not rows:
            out.append(0.0)
            continue
        p = scorer.probabilities(np.asarray([values for _, values in rows]))
        out.append(float(p.max()))
        for (faq_id, _), x in zip(rows, p, strict=True):
            attracted[faq_id] = max(attracted.get(faq_id, 0.0), float(x))
    return Calibration(tuple(sorted(out)), attracted)


def calibration_evidence(
    lexicon: FaqLexicon, processor: TextProcessor, guard: NearMissGuard | None
) -> list[list[tuple[int, tuple[float, ...]]]]:
    """For each entry, its question asked with the entry taken away: the other candidates
    nothing rules out, each with its features. (What the scorer makes of them is
    ``scores_of``: the evaluation weighs one FAQ's evidence with many scorers.)"""
    stored = lexicon.vectors
    if stored is None:
        return []
    owners = np.asarray(stored.owners)
    texts = np.asarray(stored.texts, dtype=object)
    out: list[list[tuple[int, tuple[float, ...]]]] = []
    for faq_id, entry in lexicon.entries.items():
        rows = np.flatnonzero((owners == faq_id) & (texts == entry.question))
        if not len(rows):
            continue
        sims = stored.vectors @ stored.vectors[rows[0]]
        dense = _best_per_entry(sims, stored.owners, stored.texts, leave_out=faq_id)
        terms = processor.query_terms(entry.question)
        covering = coverage_terms(entry.question, processor, guard)
        candidates = rank_candidates(
            lexicon,
            lexicon.entries,
            dense,
            terms,
            set(),
            entry.question,
            limit=CANDIDATES,
            covering=covering,
            without=faq_id,
        )
        answer = " ".join(entry.answer.split())
        if any(" ".join(c.answer.split()) == answer for c in candidates):
            continue  # a duplicate entry: its twin would be a right answer, not a wrong one
        evidence = weigh_candidates(
            processor.expand_query(entry.question),
            covering,
            candidates,
            lexicon,
            guard,
            lexicon.contrasts,
        )
        out.append([(e.candidate.faq_id, e.values) for e in evidence if not e.ruled_out])
    return out


def _best_per_entry(
    sims: np.ndarray, owners: Sequence[int], texts: Sequence[str], *, leave_out: int
) -> dict[int, DenseMatch]:
    """Each entry's nearest stored text among the ``POOL`` nearest entries (as the live SQL)."""
    order = np.argsort(-sims)
    best: dict[int, DenseMatch] = {}
    for row in order:
        owner = owners[row]
        if owner == leave_out or owner in best:
            continue
        best[owner] = DenseMatch(texts[row], float(sims[row]))
        if len(best) >= POOL:
            break
    return best
