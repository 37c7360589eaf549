"""Fitting tier 1's scorer and its operating points, one set left out at a time (1/4).

For every development FAQ set in turn: the scorer is fitted on the other sets' evidence
(``bot.evaluation.faq_examples``), its operating points chosen on the other sets too (each of
them scored by a scorer fitted without it), and the left-out set is answered with both. Those
left-out figures are the result. The scorer shipped in ``retrieval/data/decisions.json`` is then
fitted on every set, its operating points chosen on the left-out predictions of the folds.

An operating point for a risk target r is a *level* ``a`` of the FAQ's calibration scores
(``retrieval.faq.calibration``): the a-quantile for a <= 1, and past the highest score toward
certainty for a > 1 (``Calibration.threshold``). The level chosen is the lowest whose error on
the sets it is chosen on, each set counted alike, is at most r. (Tier 2 pools its sets' errors
instead, ``bot.evaluation.documents_fit``; pooled here, ViRHE4QA's left-out precision at risk
0.01 fell from 0.949 to 0.922, and the mean was kept.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.evaluation.data import FaqQuery
from bot.evaluation.faq_examples import FaqSetEvidence, decide_example
from bot.evaluation.metrics import FaqRates, faq_rates
from retrieval.decisions.scorer import MonotoneScorer, fit_scorer
from retrieval.decisions.store import OperatingPoint
from retrieval.faq.calibration import Calibration, scores_of
from retrieval.faq.features import FEATURES, UP

RISKS = (0.005, 0.01, 0.02, 0.05)
LEVELS = tuple(round(x, 3) for x in np.arange(0.5, 2.0001, 0.01))


def faq_training_rows(
    sets: Sequence[FaqSetEvidence],
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every candidate nothing ruled out, of every query (both forms): features, 0/1 right,
    and its set's name (each set weighs alike in the fit)."""
    rows: list[tuple[float, ...]] = []
    labels: list[float] = []
    groups: list[str] = []
    for s in sets:
        for ex in s.examples:
            if ex.verbatim is not None:
                continue  # taken word for word: no decision of the scorer's
            for w in ex.weighed:
                if not w.ruled_out:
                    rows.append(w.values)
                    labels.append(ex.label(w))
                    groups.append(s.name)
    return np.asarray(rows, dtype=np.float64), np.asarray(labels), groups


def fit_faq_scorer(sets: Sequence[FaqSetEvidence]) -> MonotoneScorer:
    rows, labels, groups = faq_training_rows(sets)
    return fit_scorer(rows, labels, groups, FEATURES, UP)


def probabilities(scorer: MonotoneScorer, s: FaqSetEvidence) -> list[np.ndarray]:
    """Each example's candidates' probabilities (ruled-out ones too: decisions skip them)."""
    out = []
    for ex in s.examples:
        if ex.weighed:
            out.append(scorer.probabilities(np.asarray([w.values for w in ex.weighed])))
        else:
            out.append(np.zeros(0))
    return out


@dataclass(frozen=True)
class Scored:
    """A set scored by one scorer: its examples' probabilities and its calibration."""

    evidence: FaqSetEvidence
    probabilities: list[np.ndarray]
    calibration: Calibration

    def answers(self, at: OperatingPoint | float, form: str | None = None) -> list[str | None]:
        """Each example's answer at an operating point (this FAQ's calibration, per entry) or
        at one flat threshold."""
        if isinstance(at, OperatingPoint):
            point = at

            def needs(faq_id: int) -> float:
                return self.calibration.threshold(point, faq_id)

        else:
            flat = float(at)

            def needs(faq_id: int) -> float:
                return flat

        return [
            decide_example(ex, p, needs)
            for ex, p in zip(self.evidence.examples, self.probabilities, strict=True)
            if form is None or ex.form == form
        ]

    def queries(self, form: str | None = None) -> list[FaqQuery]:
        return [ex.query for ex in self.evidence.examples if form is None or ex.form == form]

    def rates(self, at: OperatingPoint | float, form: str | None = None) -> FaqRates:
        return faq_rates(self.queries(form), self.answers(at, form))


def score_set(scorer: MonotoneScorer, s: FaqSetEvidence) -> Scored:
    return Scored(s, probabilities(scorer, s), scores_of(scorer, s.calibration))


def at_level(level: float, floor: float = 0.0) -> OperatingPoint:
    return OperatingPoint(risk=0.5, threshold=floor, quantile=level)


def choose_points(
    scored: Sequence[Scored], risks: Sequence[float] = RISKS
) -> tuple[OperatingPoint, ...]:
    """For each risk target, the lowest level whose error, averaged over the sets with each
    set counted alike, is at most the target; its floor the lowest threshold it gave a set."""
    points = []
    for risk in risks:
        chosen = LEVELS[-1]
        for level in LEVELS:
            errors = []
            for s in scored:
                r = s.rates(at_level(level))
                errors.append(1.0 - r.precision)
            if float(np.mean(errors)) <= risk:
                chosen = level
                break
        floor = min(s.calibration.threshold(at_level(chosen)) for s in scored)
        points.append(OperatingPoint(risk=risk, threshold=round(floor, 4), quantile=chosen))
    return tuple(points)


@dataclass(frozen=True)
class LeftOut:
    """One set answered by a scorer and operating points fitted without it."""

    name: str
    scorer: MonotoneScorer
    points: tuple[OperatingPoint, ...]
    scored: Scored

    def point(self, risk: float) -> OperatingPoint:
        return next(p for p in self.points if p.risk == risk)

    def threshold(self, risk: float) -> float:
        """The FAQ-wide threshold at ``risk`` (entries that took others' questions need more)."""
        return self.scored.calibration.threshold(self.point(risk))


def leave_one_out(sets: Sequence[FaqSetEvidence]) -> list[LeftOut]:
    """Each set answered by what the others fit (see the module docstring)."""
    out = []
    for held in sets:
        rest = [s for s in sets if s is not held]
        scorer = fit_faq_scorer(rest)
        # The points are chosen on the other sets, each scored by a scorer that never saw it.
        inner = [score_set(fit_faq_scorer([o for o in rest if o is not s]), s) for s in rest]
        points = (
            choose_points(inner) if len(rest) > 1 else choose_points([score_set(scorer, rest[0])])
        )
        out.append(LeftOut(held.name, scorer, points, score_set(scorer, held)))
    return out


def reliability(
    scored: Scored, bins: Sequence[float] = (0.5, 0.8, 0.9, 0.95, 0.98, 1.0001)
) -> list[tuple[str, int, float, float]]:
    """For the likeliest candidate of each query (not taken word for word): how often it is
    right against what the scorer said, by bins of probability: (bin, n, mean p, share right)."""
    pairs: list[tuple[float, float]] = []
    for ex, p in zip(scored.evidence.examples, scored.probabilities, strict=True):
        if ex.verbatim is not None:
            continue
        open_ = [(float(x), w) for x, w in zip(p, ex.weighed, strict=True) if not w.ruled_out]
        if open_:
            best_p, best = max(open_, key=lambda t: t[0])
            pairs.append((best_p, ex.label(best)))
    out = []
    low = 0.0
    for high in bins:
        inside = [(p, y) for p, y in pairs if low <= p < high]
        if inside:
            out.append(
                (
                    f"{low:.2f}–{min(high, 1.0):.2f}",
                    len(inside),
                    float(np.mean([p for p, _ in inside])),
                    float(np.mean([y for _, y in inside])),
                )
            )
        low = high
    return out
