"""The report of a tier-1 evaluation (``bot.evaluation.faq``): its JSON data, its Markdown
(rates with and without the guard, the threshold curve, an error analysis of the misses by
cause) and its precision-coverage plot."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.evaluation.faq import BELOW, CAUSES, FaqEvaluation, QueryOutcome, miss_cause
from bot.evaluation.metrics import FaqRates, faq_rates
from bot.evaluation.report import curve_plot, prepare_out, rounded, table


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
