"""Tier 1 measured on FAQ-matching queries: `tuvan eval faq` and `tuvan eval calibrate` (the
report is ``faq_report``).

The FAQ set goes into a throwaway database; every query is cleaned, restored, expanded and
embedded as the answerer does it (and, with ``unaccented``, again without diacritics), and its
five FAQ candidates are fetched once. Each threshold of the sweep
is then only ``decide_faq`` re-run on the stored candidates, with the near-miss guard ("guard")
and without it ("no guard"), the margin the same in both. The threshold is chosen on the guard
curve (the answerer runs with the guard): the highest paraphrase coverage whose precision meets
the requirement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.question import clean_question, is_question
from bot.evaluation.data import FaqItem, FaqQuery
from bot.evaluation.metrics import Choice, FaqRates, choose_threshold, faq_rates, sweep
from bot.evaluation.workspace import Workspace, load_faq, prepare_all, throwaway_database
from retrieval.faq.candidates import FaqCandidate
from retrieval.faq.decision import FaqDecision, decide_faq
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets, GuardVerdict
from retrieval.index.state import get_index_state
from retrieval.query import question_vector
from retrieval.text.folding import fold
from retrieval.thresholds import resolve_thresholds

CURVES = ("guard", "no guard")

# Why a paraphrase did not get its entry, in the order the report lists them.
BELOW = "below t_faq, the expected entry ranked first"
OTHER = "another entry ranked first"
GUARD = "the near-miss guard refused the expected entry"
COVERAGE = "the expected entry holds too few of the question's words"
MARGIN = "margin: an entry with another answer came within reach"
CAUSES = (BELOW, OTHER, GUARD, COVERAGE, MARGIN)


@dataclass(frozen=True)
class QueryOutcome:
    """One query at the configured threshold, guard on."""

    query: FaqQuery
    got: str | None  # the FAQ id tier 1 answered, or None
    best_id: str | None  # the nearest candidate, for error analysis
    best_similarity: float
    reason: str  # decide_faq's reason
    got_similarity: float | None = None
    expected_similarity: float | None = None  # None: the expected entry was not a candidate
    unguarded: str | None = None  # what tier 1 answers at the same threshold without the guard
    guard_note: str = ""  # for an answer: what the guard read in the question and the entry

    @property
    def wrong(self) -> bool:
        return self.got is not None and self.got != self.query.expected_faq

    @property
    def missed(self) -> bool:
        return self.query.kind == "paraphrase" and self.got != self.query.expected_faq


@dataclass(frozen=True)
class FaqEvaluation:
    embedder: str
    threshold: float  # t_faq used for `rates` (the resolved setting)
    margin: float
    rates: FaqRates  # at `threshold`, guard on (what tuvan does live)
    curves: dict[str, list[tuple[float, FaqRates]]]  # "guard", "no guard"
    choice: Choice  # on the "guard" curve
    required_precision: float
    outcomes: list[QueryOutcome]
    guard_enabled: bool = True  # settings.answer.near_miss_guard: whether tuvan runs it live
    # --unaccented: the same queries asked again without diacritics (folded), same FAQ.
    unaccented: FaqEvaluation | None = None


async def evaluate_faq(
    parts: AnswererParts,
    items: Sequence[FaqItem],
    queries: Sequence[FaqQuery],
    *,
    server_url: str | None = None,
    low: float = 0.80,
    high: float = 0.95,
    step: float = 0.005,
    required_precision: float = 0.99,
    on_query: Callable[[int], None] | None = None,
    enrich: bool = False,
    unaccented: bool = False,
) -> FaqEvaluation:
    """Load the FAQ into a throwaway database and decide every query at every threshold;
    with ``unaccented``, every query again without diacritics (``FaqEvaluation.unaccented``)."""
    grid = sweep(low, high, step)  # a bad range fails before a database is made
    forms = {"written": list(queries)}
    if unaccented:
        forms["unaccented"] = [replace(q, query=fold(q.query)) for q in queries]
    found: dict[str, QueryCandidates] = {}
    async with throwaway_database(server_url) as workspace:
        await load_faq(workspace, parts, items, enrich=enrich)
        async with workspace.sessionmaker() as session:
            state = await get_index_state(session)
        thresholds = resolve_thresholds(
            parts.settings.answer, parts.embedder.name, state.thresholds if state else None
        )
        for form, asked in forms.items():
            found[form] = await query_candidates(workspace, parts, asked, on_query)
    evaluations = {
        form: _evaluation(
            parts, forms[form], found[form], thresholds.t_faq, grid, required_precision
        )
        for form in forms
    }
    if unaccented:
        return replace(evaluations["written"], unaccented=evaluations["unaccented"])
    return evaluations["written"]


@dataclass(frozen=True)
class QueryCandidates:
    """Per query: what the guard reads (the question restored and expanded, as the answerer
    passes it to ``decide_faq``) and the FAQ candidates."""

    read: list[str]
    candidates: list[list[FaqCandidate]]


async def query_candidates(
    workspace: Workspace,
    parts: AnswererParts,
    queries: Sequence[FaqQuery],
    on_query: Callable[[int], None] | None,
) -> QueryCandidates:
    """Each query's FAQ candidates, read and embedded as the answerer does (restored,
    expanded; a split question matched by the mean of its parts)."""
    questions = [clean_question(q.query) for q in queries]
    asked = [i for i, q in enumerate(questions) if is_question(q)]
    candidates: list[list[FaqCandidate]] = [[] for _ in questions]
    texts = list(questions)
    prepared, vectors = await prepare_all(workspace, parts, [questions[i] for i in asked])
    by_index: dict[int, np.ndarray[Any, Any]] = {
        i: question_vector(p, v) for i, p, v in zip(asked, prepared, vectors, strict=True)
    }
    read = dict(zip(asked, prepared, strict=True))
    answerer = Answerer(parts, workspace.sessionmaker)
    async with workspace.sessionmaker() as session:
        for i in range(len(questions)):
            # Like the answerer, a message with nothing to search for never reaches tier 1.
            if i in by_index:
                texts[i] = read[i].dense
                candidates[i] = await answerer.faq_candidates(session, read[i], by_index[i])
            if on_query is not None:
                on_query(1)
    return QueryCandidates(texts, candidates)


def _evaluation(
    parts: AnswererParts,
    queries: Sequence[FaqQuery],
    found: QueryCandidates,
    t_faq: float,
    grid: Sequence[float],
    required_precision: float,
) -> FaqEvaluation:
    answer = parts.settings.answer
    questions, candidates = found.read, found.candidates
    # decide_faq only calls check(); the memo stands in for the guard it wraps.
    guard = cast(NearMissGuard, _MemoGuard(parts.guard))

    def decide(threshold: float, with_guard: bool) -> list[FaqDecision]:
        return [
            decide_faq(
                question,
                cands,
                threshold=threshold,
                margin=answer.faq_margin,
                guard=guard if with_guard else None,
                min_coverage=answer.faq_min_coverage,
            )
            for question, cands in zip(questions, candidates, strict=True)
        ]

    curves = {
        key: [(t, faq_rates(queries, _answers(decide(t, key == "guard")))) for t in grid]
        for key in CURVES
    }
    choice = choose_threshold(
        [(t, r.precision, r.coverage) for t, r in curves["guard"]], required_precision
    )
    live = decide(t_faq, True)
    unguarded = decide(t_faq, False)
    outcomes = [
        _outcome(parts.guard, q, question, cands, d, u)
        for q, question, cands, d, u in zip(
            queries, questions, candidates, live, unguarded, strict=True
        )
    ]
    return FaqEvaluation(
        embedder=parts.embedder.name,
        threshold=t_faq,
        margin=answer.faq_margin,
        rates=faq_rates(queries, _answers(live)),
        curves=curves,
        choice=choice,
        required_precision=required_precision,
        outcomes=outcomes,
        guard_enabled=answer.near_miss_guard,
    )


class _MemoGuard:
    """The guard's verdicts remembered per (question, entry): the sweep asks the same pair once
    per threshold, and reading facets is the slow part of a decision."""

    def __init__(self, guard: NearMissGuard) -> None:
        self._guard = guard
        self._seen: dict[tuple[str, str, str], GuardVerdict] = {}

    def check(self, query: str, faq_question: str, answer: str = "") -> GuardVerdict:
        key = (query, faq_question, answer)
        if key not in self._seen:
            self._seen[key] = self._guard.check(query, faq_question, answer)
        return self._seen[key]


def _answers(decisions: Sequence[FaqDecision]) -> list[str | None]:
    return [d.accepted.external_id if d.accepted is not None else None for d in decisions]


def _outcome(
    guard: NearMissGuard,
    query: FaqQuery,
    question: str,
    cands: Sequence[FaqCandidate],
    decision: FaqDecision,
    unguarded: FaqDecision,
) -> QueryOutcome:
    best = cands[0] if cands else None
    accepted = decision.accepted
    return QueryOutcome(
        query=query,
        got=accepted.external_id if accepted else None,
        best_id=best.external_id if best else None,
        best_similarity=best.similarity if best else 0.0,
        reason=decision.reason,
        got_similarity=accepted.similarity if accepted else None,
        expected_similarity=next(
            (c.similarity for c in cands if c.external_id == query.expected_faq), None
        ),
        unguarded=unguarded.accepted.external_id if unguarded.accepted else None,
        guard_note=_guard_note(guard, question, accepted.question) if accepted else "",
    )


def _guard_note(guard: NearMissGuard, question: str, faq_question: str) -> str:
    mine = guard.facets(question)
    if not mine:
        return "read nothing in the question"
    return f"question {_facets(mine)}; entry {_facets(guard.facets(faq_question))}: no conflict"


def _facets(facets: Facets) -> str:
    if not facets:
        return "nothing"
    return ", ".join(f"{k} {'/'.join(sorted(v))}" for k, v in sorted(facets.items()))


def miss_cause(outcome: QueryOutcome, threshold: float) -> str:
    """Why a paraphrase did not get its expected entry at ``threshold`` (one of ``CAUSES``)."""
    if outcome.reason.startswith("ambiguous"):
        return MARGIN
    if outcome.best_id != outcome.query.expected_faq:
        return OTHER
    if outcome.reason.startswith("the entry covers"):
        return COVERAGE
    if outcome.best_similarity < threshold or outcome.reason.startswith("similarity"):
        return BELOW
    # The expected entry came first and passed the other tests, yet was not taken.
    return GUARD
