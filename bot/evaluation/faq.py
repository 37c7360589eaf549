"""Tier 1 measured on FAQ-matching queries: `tuvan eval faq` (the report is ``faq_report``).

The FAQ set goes into a throwaway database and every query is weighed as the answerer weighs it
(``bot.evaluation.faq_examples``), as written and, with ``unaccented``, folded. The fitted
scorer (retrieval/data/decisions.json) then decides each query as tier 1 does live: at the
configured risk target (``TUVAN_ANSWER__FAQ_RISK``) with this FAQ's own calibration, at every
risk target the file fits (the coverage each gives), and along a sweep of thresholds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bot.answer.parts import AnswererParts
from bot.core.errors import ConfigError
from bot.evaluation.data import FaqItem, FaqQuery
from bot.evaluation.faq_examples import FaqExample, FaqSetEvidence, collect_faq_evidence
from bot.evaluation.fitting import Scored, reliability, score_set
from bot.evaluation.metrics import FaqRates, sweep
from retrieval.decisions.store import OperatingPoint

# Why a paraphrase did not get its expected entry, in the order the report lists them.
RULED_OUT = "the guard or the school's contrasts ruled the expected entry out"
OTHER = "another entry was likelier"
UNSURE = "the expected entry was the likeliest, not sure enough"
ABSENT = "the expected entry was not among the candidates"
CAUSES = (RULED_OUT, OTHER, UNSURE, ABSENT)


@dataclass(frozen=True)
class QueryOutcome:
    """One query at the configured risk target."""

    query: FaqQuery
    asked: str  # as read: restored, shorthand written out
    got: str | None  # the FAQ id tier 1 answered, or None
    best_id: str | None  # the likeliest candidate nothing ruled out
    best_probability: float
    expected_probability: float | None  # None: not a candidate, or ruled out
    ruled_out: str  # why the expected entry was ruled out, if it was
    cause: str = ""  # for a missed paraphrase: one of CAUSES

    @property
    def wrong(self) -> bool:
        return self.got is not None and not self.query.answered_by(self.got)

    @property
    def missed(self) -> bool:
        return self.query.kind == "paraphrase" and not self.query.answered_by(self.got)


@dataclass(frozen=True)
class FormEvaluation:
    """One form (as written, or folded) of the queries."""

    form: str
    rates: FaqRates  # at the configured risk target: what tuvan does live
    per_risk: list[tuple[float, float, FaqRates]]  # (risk, this FAQ's threshold, rates)
    curve: list[tuple[float, FaqRates]]  # a sweep of thresholds
    outcomes: list[QueryOutcome]
    reliability: list[tuple[str, int, float, float]]


@dataclass(frozen=True)
class FaqEvaluation:
    embedder: str
    risk: float  # the configured risk target
    threshold: float  # what this FAQ's calibration makes of it
    calibration: tuple[float, ...]  # the FAQ's calibration scores
    written: FormEvaluation
    folded: FormEvaluation | None = None

    @property
    def rates(self) -> FaqRates:
        return self.written.rates

    @property
    def forms(self) -> list[FormEvaluation]:
        return [f for f in (self.written, self.folded) if f is not None]


async def evaluate_faq(
    parts: AnswererParts,
    items: Sequence[FaqItem],
    queries: Sequence[FaqQuery],
    *,
    server_url: str | None = None,
    on_query: Callable[[int], None] | None = None,
    unaccented: bool = False,
    enrich: bool = False,
) -> FaqEvaluation:
    """Weigh every query against the FAQ in a throwaway database and decide it with the
    fitted scorer (see the module docstring)."""
    decision = parts.decisions.faq
    if decision is None:
        raise ConfigError(
            "no fitted FAQ scorer (retrieval/data/decisions.json): tier 1 answers only "
            "phrasings asked word for word; fit one with bench/fit_decisions.py --write"
        )
    forms = ("written", "folded") if unaccented else ("written",)
    evidence = await collect_faq_evidence(
        parts,
        "faq",
        items,
        queries,
        forms=forms,
        server_url=server_url,
        on_query=on_query,
        enrich=enrich,
    )
    scored = score_set(decision.scorer, evidence)
    risk = parts.settings.answer.faq_risk
    threshold = scored.calibration.threshold(decision.point(risk))
    points = sorted({p.risk for p in decision.points} | {risk})
    evaluations = [
        _form(scored, form, decision.point(risk), [(r, decision.point(r)) for r in points])
        for form in forms
    ]
    return FaqEvaluation(
        embedder=parts.embedder.name,
        risk=risk,
        threshold=threshold,
        calibration=scored.calibration.scores,
        written=evaluations[0],
        folded=evaluations[1] if len(evaluations) > 1 else None,
    )


def _form(
    scored: Scored,
    form: str,
    live: OperatingPoint,
    per_risk: Sequence[tuple[float, OperatingPoint]],
) -> FormEvaluation:
    only = Scored(
        FaqSetEvidence(scored.evidence.name, tuple(scored.evidence.form(form)), ()),
        [
            p
            for ex, p in zip(scored.evidence.examples, scored.probabilities, strict=True)
            if ex.form == form
        ],
        scored.calibration,
    )
    grid = sweep(0.50, 0.99, 0.01)
    threshold = round(scored.calibration.threshold(live), 4)
    return FormEvaluation(
        form=form,
        rates=only.rates(live),
        per_risk=[(r, scored.calibration.threshold(p), only.rates(p)) for r, p in per_risk],
        curve=[(t, only.rates(t)) for t in sorted({*grid, threshold})],
        outcomes=[
            _outcome(ex, p, a)
            for ex, p, a in zip(
                only.evidence.examples, only.probabilities, only.answers(live), strict=True
            )
        ],
        reliability=reliability(only),
    )


def _outcome(example: FaqExample, probabilities: np.ndarray, got: str | None) -> QueryOutcome:
    open_ = [
        (float(p), w.external_id)
        for p, w in zip(probabilities, example.weighed, strict=True)
        if not w.ruled_out
    ]
    best_p, best_id = max(open_, default=(0.0, None), key=lambda t: t[0])
    query = example.query
    expected = [
        (float(p), w)
        for p, w in zip(probabilities, example.weighed, strict=True)
        if query.answered_by(w.external_id)
    ]
    expected_p = next((p for p, w in expected if not w.ruled_out), None)
    ruled = next((w.why or "contrast" for _, w in expected if w.ruled_out), "")
    cause = ""
    if query.kind == "paraphrase" and not query.answered_by(got):
        if not expected:
            cause = ABSENT
        elif expected_p is None:
            cause = RULED_OUT
        elif best_id is not None and not query.answered_by(best_id):
            cause = OTHER
        else:
            cause = UNSURE
    return QueryOutcome(query, example.asked, got, best_id, best_p, expected_p, ruled, cause)
