"""Tier 1 measured on FAQ-matching queries: `tuvan eval faq` and `tuvan eval calibrate`.

The FAQ set goes into a throwaway database; every query is cleaned, restored, expanded and
embedded as the answerer does it (and, with ``unaccented``, again without diacritics), and its
five FAQ candidates are fetched once. Each threshold of the sweep
is then only ``decide_faq`` re-run on the stored candidates, with the near-miss guard ("guard")
and without it ("no guard"), the margin the same in both. The threshold is chosen on the guard
curve (the answerer runs with the guard): the highest paraphrase coverage whose precision meets
the requirement.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.question import clean_question, is_question
from bot.evaluation.data import FaqItem, FaqQuery
from bot.evaluation.metrics import Choice, FaqRates, choose_threshold, faq_rates, sweep
from bot.evaluation.report import curve_plot, prepare_out, rounded, table
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


# -- report -----------------------------------------------------------------------------------


def faq_report(ev: FaqEvaluation) -> tuple[dict[str, Any], str]:
    """The JSON data and the Markdown of one evaluation."""
    data: dict[str, Any] = {
        "embedder": ev.embedder,
        "threshold": ev.threshold,
        "margin": ev.margin,
        "guard_enabled": ev.guard_enabled,
        **ev.rates.as_dict(),
        "kinds": _kinds(ev.outcomes),
        "unguarded": _unguarded_rates(ev).as_dict(),
        "required_precision": ev.required_precision,
        "chosen": {
            "threshold": ev.choice.threshold,
            "met": ev.choice.met,
            "precision": ev.choice.precision,
            "coverage": ev.choice.coverage,
        },
        "curves": {
            key: [{"threshold": t, **r.as_dict()} for t, r in points]
            for key, points in ev.curves.items()
        },
        "miss_causes": _cause_counts(ev),
        "misses": [_miss_row(ev, o) for o in ev.outcomes if o.wrong or o.missed],
    }
    if ev.unaccented is not None:
        data["unaccented"] = faq_report(ev.unaccented)[0]
    return rounded(data), _markdown(ev)


def _kinds(outcomes: Sequence[QueryOutcome]) -> dict[str, int]:
    counts = Counter(o.query.kind for o in outcomes)
    return {k: counts[k] for k in ("paraphrase", "near_miss", "out_of_scope")}


def _unguarded_rates(ev: FaqEvaluation) -> FaqRates:
    return faq_rates([o.query for o in ev.outcomes], [o.unguarded for o in ev.outcomes])


def _cause_counts(ev: FaqEvaluation) -> dict[str, int]:
    counts = Counter(miss_cause(o, ev.threshold) for o in ev.outcomes if o.missed)
    return {cause: counts[cause] for cause in CAUSES}


def _miss_row(ev: FaqEvaluation, o: QueryOutcome) -> dict[str, Any]:
    return {
        "query": o.query.query,
        "kind": o.query.kind,
        "expected": o.query.expected_faq,
        "got": o.got,
        "got_similarity": o.got_similarity,
        "best_id": o.best_id,
        "best_similarity": o.best_similarity,
        "expected_similarity": o.expected_similarity,
        "reason": o.reason,
        "cause": miss_cause(o, ev.threshold) if o.missed else "wrong answer",
        "guard": o.guard_note,
        "unguarded": o.unguarded,
    }


def _markdown(ev: FaqEvaluation) -> str:
    kinds = _kinds(ev.outcomes)
    lines = [
        "# FAQ tier (tier 1)",
        "",
        f"Embedder `{ev.embedder}`, t_faq {ev.threshold:.3f}, margin {ev.margin:.3f}; "
        f"{len(ev.outcomes)} queries ({', '.join(f'{k} {n}' for k, n in kinds.items())}).",
        "",
        _headline(ev),
        "",
        _choice_line(ev),
    ]
    if not ev.guard_enabled:
        lines += [
            "",
            "The near-miss guard is off in these settings (`TUVAN_ANSWER__NEAR_MISS_GUARD`): "
            "tuvan answers live as the *no guard* row and curve show.",
        ]
    if ev.unaccented is not None:
        lines += ["", *_forms_section(ev, ev.unaccented)]
    lines += ["", "## Precision and coverage by threshold", "", _curve_table(ev)]
    lines += ["", *_error_analysis(ev)]
    if ev.unaccented is not None:
        folded = ev.unaccented
        lines += ["", "## Without diacritics: precision and coverage by threshold", ""]
        lines += [_curve_table(folded), ""]
        lines += [
            re.sub(r"^(#+) ", r"\1 Without diacritics: ", line) for line in _error_analysis(folded)
        ]
    return "\n".join(lines) + "\n"


def _forms_section(written: FaqEvaluation, folded: FaqEvaluation) -> list[str]:
    """Both forms side by side at the configured threshold, guard on (as tuvan answers)."""
    rows = [["as written", *_rate_cells(written.rates)], ["unaccented", *_rate_cells(folded.rates)]]
    return [
        "## Written and unaccented",
        "",
        "Every query asked as written, then again without diacritics (folded).",
        "",
        _rates_table("form", rows),
    ]


# The columns of a row of _rate_cells.
_RATE_COLUMNS = ("precision", "coverage", "false accepts", "near miss", "out of scope", "answered")


def _rates_table(first: str, rows: Sequence[Sequence[object]]) -> str:
    return table([first, *_RATE_COLUMNS], rows)


def _rate_cells(r: FaqRates) -> list[object]:
    return [
        r.precision,
        r.coverage,
        r.false_accept,
        r.false_accept_near_miss,
        r.false_accept_out_of_scope,
        f"{r.answered}/{r.queries}",
    ]


def _headline(ev: FaqEvaluation) -> str:
    rows = [
        ["guard (as tuvan answers)", *_rate_cells(ev.rates)],
        ["no guard", *_rate_cells(_unguarded_rates(ev))],
    ]
    return _rates_table("configuration", rows)


def _choice_line(ev: FaqEvaluation) -> str:
    c = ev.choice
    points = ev.curves["guard"]
    span = f"{points[0][0]:.3f}–{points[-1][0]:.3f}" if points else "none"
    if c.met:
        return (
            f"**Chosen threshold:** t_faq {c.threshold:.3f} gives the highest coverage "
            f"({c.coverage:.3f}) with precision ≥ {ev.required_precision:g} "
            f"({c.precision:.3f}), guard on: set `TUVAN_ANSWER__T_FAQ={c.threshold:.3f}`."
        )
    return (
        f"**No threshold reaches precision {ev.required_precision:g}** at any swept t_faq "
        f"({span}); the best point is t_faq {c.threshold:.3f} with precision "
        f"{c.precision:.3f} and coverage {c.coverage:.3f}. Leave t_faq unset or raise it; "
        "look at the wrong answers below."
    )


def _on_grid(t: float) -> bool:
    return abs(t * 100 - round(t * 100)) < 1e-6


def _curve_table(ev: FaqEvaluation) -> str:
    unguarded = dict(ev.curves["no guard"])
    marks = {ev.threshold: "configured", ev.choice.threshold: "chosen"}
    if ev.threshold == ev.choice.threshold:
        marks[ev.threshold] = "configured, chosen"
    points = ev.curves["guard"]
    shown = [(t, r) for t, r in points if _on_grid(t) or t in marks]
    if len(shown) < 2:
        shown = points
    header = ["t_faq", "precision", "coverage", "false accepts", "answered"]
    header += [f"{h} (no guard)" for h in header[1:]]
    rows = []
    for t, r in shown:
        u = unguarded[t]
        label = f"{t:.3f}" + (f" ({marks[t]})" if t in marks else "")
        rows.append(
            [
                label,
                r.precision,
                r.coverage,
                r.false_accept,
                r.answered,
                u.precision,
                u.coverage,
                u.false_accept,
                u.answered,
            ]
        )
    return table(header, rows)


def _similarity(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _error_analysis(ev: FaqEvaluation) -> list[str]:
    t = ev.threshold
    wrong = [o for o in ev.outcomes if o.wrong]
    missed = [o for o in ev.outcomes if o.missed]
    lines = [f"## Error analysis at t_faq {t:.3f}", ""]
    lines += _guard_effect(ev)
    lines += ["", f"### Wrong answers ({len(wrong)})", ""]
    if wrong:
        lines.append(
            "False accepts (near misses and out-of-scope queries) and paraphrases answered "
            "with another entry. *Guard* says what the guard read in the question: a question "
            "it reads nothing in is left to the threshold alone."
        )
        lines.append("")
        header = ["query", "kind", "got", "expected", "similarity", "guard", "without guard"]
        rows = [
            [
                o.query.query,
                o.query.kind,
                o.got,
                o.query.expected_faq or "none",
                _similarity(o.got_similarity),
                o.guard_note,
                o.unguarded or "none",
            ]
            for o in sorted(wrong, key=lambda o: (o.query.kind, o.got or "", o.query.query))
        ]
        lines.append(table(header, rows))
    else:
        lines.append("None.")
    counts = _cause_counts(ev)
    lines += ["", f"### Missed paraphrases ({len(missed)})", ""]
    if not missed:
        lines.append("None.")
        return lines
    lines.append(table(["cause", "count"], [[c, n] for c, n in counts.items()]))
    header = ["query", "expected", "expected similarity", "nearest", "similarity", "got", "reason"]
    for cause in CAUSES:
        group = [o for o in missed if miss_cause(o, t) == cause]
        if not group:
            continue
        group.sort(key=lambda o: (o.query.expected_faq or "", -o.best_similarity, o.query.query))
        lines += ["", f"#### {cause[0].upper()}{cause[1:]} ({len(group)})", ""]
        if cause == BELOW:
            gaps = sorted(t - o.best_similarity for o in group)
            lines += [
                f"Short of t_faq by {gaps[len(gaps) // 2]:.3f} at the median "
                f"(least {gaps[0]:.3f}, most {gaps[-1]:.3f}).",
                "",
            ]
        rows = [
            [
                o.query.query,
                o.query.expected_faq,
                _similarity(o.expected_similarity),
                o.best_id or "none",
                _similarity(o.best_similarity),
                o.got or "none",
                o.reason,
            ]
            for o in group
        ]
        lines.append(table(header, rows))
    return lines


def _guard_effect(ev: FaqEvaluation) -> list[str]:
    """What the guard changed at the threshold: wrong answers turned away, right ones lost."""
    prevented = sum(
        o.unguarded is not None and o.unguarded != o.query.expected_faq and not o.wrong
        for o in ev.outcomes
    )
    lost = sum(
        o.unguarded is not None and o.unguarded == o.query.expected_faq and o.got != o.unguarded
        for o in ev.outcomes
    )
    return [
        f"The near-miss guard turned away {prevented} wrong answer(s) that similarity alone "
        f"would have given, and cost {lost} right one(s)."
    ]


# -- plots ------------------------------------------------------------------------------------


def faq_plots(ev: FaqEvaluation, out: Path) -> list[Path]:
    """``faq_precision_coverage.png``: precision against coverage as t_faq sweeps."""
    prepare_out(out)
    curves = {
        key: [(r.coverage, r.precision) for _, r in points] for key, points in ev.curves.items()
    }
    c = ev.choice
    label = f"t_faq {c.threshold:.3f}" + ("" if c.met else " (precision not met)")
    marks = {label: (c.coverage, c.precision)}
    path = curve_plot(
        out / "faq_precision_coverage.png",
        f"FAQ tier: precision vs coverage ({ev.embedder})",
        curves,
        xlabel="coverage (paraphrases answered with their entry)",
        ylabel="precision (answers that were right)",
        marks=marks,
    )
    return [path]
