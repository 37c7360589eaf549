"""Fitting tier 2's answer-or-abstain scorer, one question set left out at a time (1/4).

An example is a documents answer the answerer would give with no scorer (its features,
``bot.answer.confidence``), and what it holds: the key facts found in it. The scorer learns
whether an answer is *sound*, holding at least one key fact; the event it guards against is the
confidently wrong answer, one that quotes passages holding nothing the question's answer key
holds (an out-of-scope question answered at all is one). A partial answer, cited and under the
disclaimer, is still worth giving; an answer of nothing asked is not. For each set in turn the
scorer is fitted on the others and its threshold for each risk target chosen on them (each
scored by a scorer that never saw it): the lowest threshold at which the share of confidently
wrong answers among those given, over those sets together, is at most the target. Together, each
set's answers count by its share of its questions, so that a large set does not drown the others;
and a share pooled over every answer given, not a mean of each set's share, so that a small set
answering two of its questions, one wrongly, does not swing the threshold (a mean of the sets'
shares moved UIT's left-out threshold from 0.76 to 0.57 when one question left another set).
The left-out set is then answered with both, and reported with both readings of right (every
key fact, at least one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.answer.confidence import DOC_FEATURES, DOC_UP
from retrieval.decisions.scorer import MonotoneScorer, fit_scorer
from retrieval.decisions.store import OperatingPoint

DOC_RISKS = (0.05, 0.1, 0.2, 0.3)
GRID = tuple(round(x, 3) for x in np.arange(0.0, 1.0001, 0.01))


@dataclass(frozen=True)
class DocExample:
    question_id: str
    form: str
    features: tuple[float, ...]
    right: bool  # every key fact found (an out-of-scope question answered is never right)
    found: int  # key facts found
    facts: int  # key facts asked (0: out of scope)

    @property
    def sound(self) -> bool:
        """At least one key fact; never for an out-of-scope question (nothing to quote)."""
        return self.facts > 0 and self.found > 0


@dataclass(frozen=True)
class DocSet:
    name: str
    examples: tuple[DocExample, ...]
    questions: int  # in-scope questions of the set, per form (the coverage's denominator)


def fit_documents(sets: Sequence[DocSet]) -> MonotoneScorer:
    rows = [e.features for s in sets for e in s.examples]
    labels = [float(e.sound) for s in sets for e in s.examples]
    groups = [s.name for s in sets for _ in s.examples]
    return fit_scorer(np.asarray(rows), np.asarray(labels), groups, DOC_FEATURES, DOC_UP)


def probabilities(scorer: MonotoneScorer, s: DocSet) -> np.ndarray:
    if not s.examples:
        return np.zeros(0)
    return scorer.probabilities(np.asarray([e.features for e in s.examples]))


@dataclass(frozen=True)
class DocRates:
    answered: int
    right: int
    wrong_no_fact: int  # confidently wrong: answered, not one key fact (or out of scope)
    questions: int
    out_of_scope: int = 0  # of ``wrong_no_fact``, out-of-scope questions answered

    @property
    def precision(self) -> float:
        return self.right / self.answered if self.answered else 1.0

    @property
    def coverage(self) -> float:
        return self.right / self.questions if self.questions else 0.0

    @property
    def confidently_wrong_share(self) -> float:
        """Of the answers given, those holding no key fact: what the risk target bounds."""
        return self.wrong_no_fact / self.answered if self.answered else 0.0


def rates(s: DocSet, p: np.ndarray, threshold: float, form: str | None = None) -> DocRates:
    kept = [
        e
        for e, x in zip(s.examples, p, strict=True)
        if x >= threshold and (form is None or e.form == form)
    ]
    forms = 1 if form is not None else len({e.form for e in s.examples}) or 1
    return DocRates(
        len(kept),
        sum(e.right for e in kept),
        sum(e.found == 0 for e in kept),
        s.questions * forms,
        sum(e.facts == 0 for e in kept),
    )


def pooled_wrong_share(scored: Sequence[tuple[DocSet, np.ndarray]], threshold: float) -> float:
    """Of the answers given at ``threshold`` over every set, the share confidently wrong, each
    set's counts divided by its questions (each set weighs by the share it answers, not its
    size)."""
    wrong = given = 0.0
    for s, p in scored:
        r = rates(s, p, threshold)
        if r.questions:
            wrong += r.wrong_no_fact / r.questions
            given += r.answered / r.questions
    return wrong / given if given else 0.0


def choose_thresholds(
    scored: Sequence[tuple[DocSet, np.ndarray]], risks: Sequence[float] = DOC_RISKS
) -> tuple[OperatingPoint, ...]:
    points = []
    for risk in risks:
        chosen = GRID[-1]
        for t in GRID:
            if pooled_wrong_share(scored, t) <= risk:
                chosen = t
                break
        points.append(OperatingPoint(risk=risk, threshold=chosen))
    return tuple(points)


@dataclass(frozen=True)
class DocLeftOut:
    name: str
    scorer: MonotoneScorer
    points: tuple[OperatingPoint, ...]
    doc_set: DocSet
    p: np.ndarray

    def rates(self, risk: float, form: str | None = None) -> DocRates:
        point = next(q for q in self.points if q.risk == risk)
        return rates(self.doc_set, self.p, point.threshold, form)


def leave_one_out(sets: Sequence[DocSet]) -> list[DocLeftOut]:
    out = []
    for held in sets:
        rest = [s for s in sets if s is not held]
        scorer = fit_documents(rest)
        inner = [
            (s, probabilities(fit_documents([o for o in rest if o is not s]), s)) for s in rest
        ]
        points = choose_thresholds(inner)
        out.append(DocLeftOut(held.name, scorer, points, held, probabilities(scorer, held)))
    return out
