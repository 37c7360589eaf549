"""The report of a tier-1 evaluation (``bot.evaluation.faq``): its JSON data, its Markdown (the
rates at the configured risk target and at every fitted one, the threshold curve, how well the
probabilities hold, the wrong answers and the misses by cause) and its precision-coverage plot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.evaluation.faq import CAUSES, FaqEvaluation, FormEvaluation, QueryOutcome
from bot.evaluation.metrics import FaqRates
from bot.evaluation.report import curve_plot, prepare_out, rounded, table

_FORM_NAMES = {"written": "as written", "folded": "without diacritics"}


def faq_report(ev: FaqEvaluation) -> tuple[dict[str, Any], str]:
    """The JSON data and the Markdown of one evaluation."""
    data: dict[str, Any] = {
        "embedder": ev.embedder,
        "risk": ev.risk,
        "threshold": ev.threshold,
        "calibration_scores": len(ev.calibration),
        **ev.rates.as_dict(),
        "kinds": _kinds(ev.written.outcomes),
    }
    for form in ev.forms:
        data[form.form] = {
            **form.rates.as_dict(),
            "per_risk": [
                {"risk": r, "threshold": t, **rates.as_dict()} for r, t, rates in form.per_risk
            ],
            "curve": [{"threshold": t, **r.as_dict()} for t, r in form.curve],
            "reliability": [
                {"bin": b, "n": n, "mean_probability": p, "right": y}
                for b, n, p, y in form.reliability
            ],
            "miss_causes": _cause_counts(form),
            "misses": [_miss_row(o) for o in form.outcomes if o.wrong or o.missed],
        }
    return rounded(data), _markdown(ev)


def _kinds(outcomes: Sequence[QueryOutcome]) -> dict[str, int]:
    counts = Counter(o.query.kind for o in outcomes)
    return {k: counts[k] for k in ("paraphrase", "near_miss", "out_of_scope")}


def _cause_counts(form: FormEvaluation) -> dict[str, int]:
    counts = Counter(o.cause for o in form.outcomes if o.missed)
    return {cause: counts[cause] for cause in CAUSES}


def _miss_row(o: QueryOutcome) -> dict[str, Any]:
    return {
        "query": o.query.query,
        "asked": o.asked,
        "kind": o.query.kind,
        "expected": o.query.expected_faq,
        "got": o.got,
        "best_id": o.best_id,
        "best_probability": o.best_probability,
        "expected_probability": o.expected_probability,
        "ruled_out": o.ruled_out,
        "cause": o.cause or "wrong answer",
    }


_RATE_COLUMNS = ("precision", "coverage", "false accepts", "near miss", "out of scope", "answered")


def _rate_cells(r: FaqRates) -> list[object]:
    return [
        r.precision,
        r.coverage,
        r.false_accept,
        r.false_accept_near_miss,
        r.false_accept_out_of_scope,
        f"{r.answered}/{r.queries}",
    ]


def _markdown(ev: FaqEvaluation) -> str:
    kinds = _kinds(ev.written.outcomes)
    lines = [
        "# FAQ tier (tier 1)",
        "",
        f"Embedder `{ev.embedder}`; risk target {ev.risk:g} (`TUVAN_ANSWER__FAQ_RISK`), which "
        f"this FAQ's calibration ({len(ev.calibration)} entries asked without their own entry) "
        f"makes a probability threshold of {ev.threshold:.3f}; "
        f"{len(ev.written.outcomes)} queries ({', '.join(f'{k} {n}' for k, n in kinds.items())}).",
        "",
        table(
            ["form", *_RATE_COLUMNS],
            [[_FORM_NAMES[f.form], *_rate_cells(f.rates)] for f in ev.forms],
        ),
        "",
        "## The coverage each risk target gives",
        "",
        table(
            ["form", "risk target", "threshold", *_RATE_COLUMNS],
            [
                [_FORM_NAMES[f.form], f"{r:g}", f"{t:.3f}", *_rate_cells(rates)]
                for f in ev.forms
                for r, t, rates in f.per_risk
            ],
        ),
        "",
        "Observed error (1 − precision) at or under the risk target means the scorer held here.",
    ]
    for f in ev.forms:
        name = _FORM_NAMES[f.form]
        lines += ["", f"## Probabilities against outcomes ({name})", ""]
        lines += [
            "The likeliest candidate of each query not taken word for word: how often it was "
            "right, by the probability the scorer gave it.",
            "",
            table(
                ["probability", "queries", "mean probability", "share right"],
                [[b, n, p, y] for b, n, p, y in f.reliability],
            ),
            "",
            f"## Precision and coverage by threshold ({name})",
            "",
            _curve_table(f, ev.threshold),
            "",
            *_error_analysis(f, name),
        ]
    return "\n".join(lines) + "\n"


def _curve_table(f: FormEvaluation, configured: float) -> str:
    rows = []
    for t, r in f.curve:
        if abs(t * 20 - round(t * 20)) > 1e-6 and abs(t - configured) > 1e-6 and t < 0.9:
            continue  # every 0.05 below 0.9, every 0.01 above it, and the configured one
        label = f"{t:.3f}" + (" (configured)" if abs(t - configured) < 1e-6 else "")
        rows.append([label, r.precision, r.coverage, r.false_accept, r.answered])
    return table(["threshold", "precision", "coverage", "false accepts", "answered"], rows)


def _probability(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _error_analysis(f: FormEvaluation, name: str) -> list[str]:
    wrong = [o for o in f.outcomes if o.wrong]
    missed = [o for o in f.outcomes if o.missed]
    lines = [f"### Wrong answers ({name}: {len(wrong)})", ""]
    if wrong:
        rows = [
            [
                o.query.query,
                o.query.kind,
                o.got,
                o.query.expected_faq or "none",
                _probability(o.best_probability),
            ]
            for o in sorted(wrong, key=lambda o: (o.query.kind, o.got or "", o.query.query))
        ]
        lines.append(table(["query", "kind", "got", "expected", "probability"], rows))
    else:
        lines.append("None.")
    lines += ["", f"### Missed paraphrases ({name}: {len(missed)})", ""]
    if not missed:
        return [*lines, "None."]
    lines.append(table(["cause", "count"], [[c, n] for c, n in _cause_counts(f).items()]))
    for cause in CAUSES:
        group = sorted(
            (o for o in missed if o.cause == cause),
            key=lambda o: (o.query.expected_faq or "", o.query.query),
        )
        if not group:
            continue
        lines += ["", f"#### {cause[0].upper()}{cause[1:]} ({len(group)})", ""]
        rows = [
            [
                o.query.query,
                o.query.expected_faq,
                _probability(o.expected_probability),
                o.best_id or "none",
                _probability(o.best_probability),
                o.ruled_out,
            ]
            for o in group
        ]
        lines.append(
            table(
                ["query", "expected", "its probability", "likeliest", "probability", "ruled out"],
                rows,
            )
        )
    return lines


# -- plots ------------------------------------------------------------------------------------


def faq_plots(ev: FaqEvaluation, out: Path) -> list[Path]:
    """``faq_precision_coverage.png``: precision against coverage as the threshold sweeps."""
    prepare_out(out)
    curves = {
        _FORM_NAMES[f.form]: [(r.coverage, r.precision) for _, r in f.curve] for f in ev.forms
    }
    r = ev.rates
    marks = {f"risk {ev.risk:g} (threshold {ev.threshold:.3f})": (r.coverage, r.precision)}
    path = curve_plot(
        out / "faq_precision_coverage.png",
        f"FAQ tier: precision vs coverage ({ev.embedder})",
        curves,
        xlabel="coverage (paraphrases answered with their entry)",
        ylabel="precision (answers that were right)",
        marks=marks,
    )
    return [path]
