"""The report of ``tuvan eval questions``: JSON data, Markdown with an error analysis, plots."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.answer.replies import answer_body
from bot.evaluation.answer_summaries import (
    answer_lengths,
    judge_summary,
    key_facts_summary,
    out_of_scope_summary,
    tier_counts,
)
from bot.evaluation.calibration import DocPoint
from bot.evaluation.metrics import Choice, facts_found
from bot.evaluation.questions import (
    AnswerOutcome,
    QuestionsEvaluation,
    relevant_units,
)
from bot.evaluation.report import bar_plot, cell, curve_plot, table


def questions_report(ev: QuestionsEvaluation) -> tuple[dict[str, Any], str]:
    """The JSON data and the Markdown of an evaluation."""
    types = sorted({q.type for q in ev.questions if not q.out_of_scope})
    metrics: dict[str, Any] = {}
    for mode in ev.modes:
        metrics[mode] = {}
        for level in ev.levels:
            keys = [f"{m}@{k}" for m in ("hit", "mrr", "ndcg", "recall", "all") for k in ev.ks]
            overall = ev.metrics(mode, level)
            entry: dict[str, Any] = {key: overall.get(key) for key in keys}
            entry["questions"] = len(ev.modes[mode].per_question.get(level, {}))
            entry["by_type"] = {
                t: {
                    "questions": sum(
                        1
                        for q in ev.questions
                        if q.type == t and q.id in ev.modes[mode].per_question.get(level, {})
                    ),
                    **ev.metrics(mode, level, t),
                }
                for t in types
            }
            metrics[mode][level] = entry
    main_mode = ev.answer_mode if ev.answer_mode in ev.modes else next(iter(ev.modes))
    search_ms = sorted(ms for r in ev.modes.values() for ms in r.search_ms)
    data: dict[str, Any] = {
        "embedder": ev.embedder,
        "questions": len(ev.questions),
        "loaded": ev.loaded,
        "ks": list(ev.ks),
        "levels": ev.levels,
        "answer_mode": ev.answer_mode,
        "thresholds": ev.thresholds,
        # The configured mode's numbers at the top, every mode's under "modes".
        "metrics": metrics[main_mode],
        "modes": metrics,
        "tiers": tier_counts(ev.outcomes),
        "key_facts": key_facts_summary(ev.outcomes),
        "key_facts_rate": key_facts_summary(ev.outcomes)["rate_answered"],
        "answer_length": answer_lengths(ev.outcomes),
        "out_of_scope": out_of_scope_summary(ev.outcomes),
        "judge": ev.judge,
        "judged": judge_summary(ev.outcomes),
        "seconds": ev.seconds,
        "search_ms_p95": search_ms[int(0.95 * (len(search_ms) - 1))] if search_ms else None,
        "misses": _misses(ev, main_mode),
    }
    markdown = _markdown(ev, data, main_mode, types)
    if ev.unaccented is not None:
        folded, folded_markdown = questions_report(ev.unaccented)
        data["unaccented"] = folded
        markdown = _with_unaccented(ev, data, folded, markdown, folded_markdown)
    return data, markdown


def side_by_side_rows(
    ev: QuestionsEvaluation, written: dict[str, Any], folded: dict[str, Any]
) -> tuple[list[str], list[list[Any]]]:
    """Per level and mode: the main metrics as written and without diacritics, and the gap."""
    keys = [f"hit@{k}" for k in ev.ks] + [f"mrr@{max(ev.ks)}"]
    header = ["level", "mode"] + [
        f"{key.replace('hit', 'Hit').replace('mrr', 'MRR')} {form}"
        for key in keys
        for form in ("written", "unaccented")
    ]
    rows = []
    for level in ev.levels:
        for mode in written["modes"]:
            w = written["modes"][mode][level]
            f = folded["modes"][mode][level]
            rows.append([level, mode] + [_fmt(entry[key]) for key in keys for entry in (w, f)])
    return header, rows


def _with_unaccented(
    ev: QuestionsEvaluation,
    written: dict[str, Any],
    folded: dict[str, Any],
    markdown: str,
    folded_markdown: str,
) -> str:
    """The report with a written/unaccented summary first and the unaccented sections last."""
    header, rows = side_by_side_rows(ev, written, folded)
    summary = [
        "## Written and unaccented",
        "",
        "Every question asked as written, then again without diacritics (folded).",
        "",
        table(header, rows),
        "",
        table(
            ["answers", "written", "unaccented"],
            [[t, written["tiers"][t], folded["tiers"][t]] for t in written["tiers"]]
            + [
                [
                    "all key facts, of the answered",
                    _fmt(written["key_facts"]["rate_answered"]),
                    _fmt(folded["key_facts"]["rate_answered"]),
                ],
                [
                    "documents answers, median / p90 characters",
                    _lengths(written["answer_length"]["documents"]),
                    _lengths(folded["answer_length"]["documents"]),
                ],
                [
                    "out of scope in the fallback",
                    _fmt(written["out_of_scope"]["fallback_rate"]),
                    _fmt(folded["out_of_scope"]["fallback_rate"]),
                ],
            ],
        ),
        "",
    ]
    head, _, rest = markdown.partition("## Retrieval")
    body = folded_markdown.split("## Retrieval", 1)[1].rsplit("\nSeconds:", 1)[0]
    return (
        head
        + "\n".join(summary)
        + "## Retrieval"
        + rest
        + "\n\n# Asked without diacritics\n\n## Retrieval"
        + body
    )


def _misses(ev: QuestionsEvaluation, mode: str) -> dict[str, list[dict[str, Any]]]:
    """Questions to read: retrieval misses at 5, answers lacking a key fact, wrong out-of-scope."""
    level = ev.levels[0] if ev.levels else None
    k = 5 if 5 in ev.ks else max(ev.ks)
    retrieval = []
    if level is not None:
        for q in ev.questions:
            m = ev.modes[mode].per_question.get(level, {}).get(q.id)
            if m is not None and m[f"hit@{k}"] == 0:
                retrieval.append(
                    {
                        "id": q.id,
                        "type": q.type,
                        "question": q.question,
                        "expected": sorted(str(u) for u in relevant_units(q, level)),
                        "retrieved": ev.modes[mode].top_units.get(q.id, []),
                    }
                )
    facts = [
        {
            "id": o.question.id,
            "tier": o.answer.tier,
            "question": o.question.question,
            "missing": [f for f in o.question.key_facts if f not in _found_facts(o)],
            "reason": o.answer.reason,
        }
        for o in ev.outcomes
        if not o.question.out_of_scope and o.question.key_facts and not o.complete
    ]
    scope = [
        {
            "id": o.question.id,
            "tier": o.answer.tier,
            "question": o.question.question,
            "answered_from": o.answer.faq_external_id
            or ", ".join(sorted({c.source for c in o.answer.citations})),
        }
        for o in ev.outcomes
        if o.question.out_of_scope and not o.right
    ]
    return {"retrieval": retrieval, "key_facts": facts, "out_of_scope": scope}


def _found_facts(o: AnswerOutcome) -> set[str]:
    body = answer_body(o.answer)
    return {f for f in o.question.key_facts if facts_found(body, [f])}


def _lengths(spread: dict[str, Any]) -> str:
    if not spread["answers"]:
        return "-"
    return f"{spread['median']:.0f} / {spread['p90']} (n = {spread['answers']})"


def _fmt(value: Any) -> str:
    return "–" if value is None else cell(value)


def _markdown(ev: QuestionsEvaluation, data: dict[str, Any], main: str, types: list[str]) -> str:
    out = [
        "# tuvan eval questions",
        "",
        f"{len(ev.questions)} questions; embedder `{ev.embedder}`; answers in mode `{main}` with "
        f"FAQ risk target {ev.thresholds['faq_risk']}, t_doc {ev.thresholds['t_doc']} "
        f"({ev.thresholds['from']}); loaded: "
        + ", ".join(f"{k} {v if not isinstance(v, list) else len(v)}" for k, v in ev.loaded.items())
        + (f"; judge: {ev.judge}" if ev.judge else "; no judge"),
        "",
        "## Retrieval",
    ]
    for level in ev.levels:
        header = ["mode", "n"] + [
            f"{m}@{k}" for m in ("Hit", "MRR", "nDCG", "Recall") for k in ev.ks
        ]
        rows = []
        for mode, by_level in data["modes"].items():
            entry = by_level[level]
            rows.append(
                [mode, entry["questions"]]
                + [_fmt(entry[f"{m}@{k}"]) for m in ("hit", "mrr", "ndcg", "recall") for k in ev.ks]
            )
        out += ["", f"### {level.capitalize()} level", "", table(header, rows)]
        k = 5 if 5 in ev.ks else max(ev.ks)
        by_type = data["modes"][main][level]["by_type"]
        out += [
            "",
            f"By question type (mode `{main}`):",
            "",
            table(
                ["type", "n", f"Hit@{k}", f"MRR@{k}", f"Recall@{k}", f"all sources@{k}"],
                [
                    [
                        t,
                        v["questions"],
                        _fmt(v.get(f"hit@{k}")),
                        _fmt(v.get(f"mrr@{k}")),
                        _fmt(v.get(f"recall@{k}")),
                        _fmt(v.get(f"all@{k}")),
                    ]
                    for t, v in by_type.items()
                    if v["questions"]
                ],
            ),
        ]
    tiers = data["tiers"]
    facts = data["key_facts"]
    oos = data["out_of_scope"]
    out += [
        "",
        "## Answers",
        "",
        table(
            ["tier", "answers", "share"],
            [[t, n, n / max(1, len(ev.outcomes))] for t, n in tiers.items()],
        ),
        "",
        table(
            ["key facts (in-scope questions that list some)", "value"],
            [
                ["questions", facts["questions"]],
                ["answered (not fallback)", facts["answered"]],
                ["all key facts, of the answered", _fmt(facts["rate_answered"])],
                ["all key facts, of all (fallback = miss)", _fmt(facts["rate"])],
                ["mean share of key facts found", _fmt(facts["mean_fraction"])],
                [
                    "documents answers: median / p90 characters before the sources",
                    _lengths(data["answer_length"]["documents"]),
                ],
                [
                    "factoid documents answers: median / p90 characters",
                    _lengths(data["answer_length"]["factoid"]),
                ],
            ]
            + [
                [f"all key facts, tier {t}", f"{_fmt(v['rate'])} (n = {v['questions']})"]
                for t, v in facts["by_tier"].items()
            ],
        ),
        "",
        f"Out of scope: {oos['fallback']} of {oos['questions']} ended in the fallback "
        f"(rate {_fmt(oos['fallback_rate'])}); {oos['answered_wrongly']} answered from an FAQ "
        "or documents.",
    ]
    if data["judged"]:
        j = data["judged"]
        out += ["", f"Judge ({ev.judge}): {j['correct']} of {j['questions']} judged correct."]
    out += _analysis_markdown(data["misses"])
    out += [
        "",
        "Seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in ev.seconds.items()),
    ]
    return "\n".join(out)


def _analysis_markdown(misses: dict[str, list[dict[str, Any]]]) -> list[str]:
    out = ["", "## Error analysis"]
    out += ["", f"### Retrieval misses at 5 ({len(misses['retrieval'])})", ""]
    if misses["retrieval"]:
        out.append(
            table(
                ["id", "type", "question", "expected", "retrieved first"],
                [
                    [
                        m["id"],
                        m["type"],
                        m["question"],
                        ", ".join(m["expected"]),
                        ", ".join(m["retrieved"]),
                    ]
                    for m in misses["retrieval"]
                ],
            )
        )
    causes = Counter(m["tier"] for m in misses["key_facts"])
    out += [
        "",
        f"### Answers missing a key fact ({len(misses['key_facts'])}: "
        + ", ".join(f"{n} {t}" for t, n in sorted(causes.items()))
        + ")",
        "",
    ]
    if misses["key_facts"]:
        out.append(
            table(
                ["id", "tier", "question", "missing", "why this tier"],
                [
                    [m["id"], m["tier"], m["question"], "; ".join(m["missing"]), m["reason"]]
                    for m in misses["key_facts"]
                ],
            )
        )
    out += ["", f"### Out-of-scope questions answered ({len(misses['out_of_scope'])})", ""]
    if misses["out_of_scope"]:
        out.append(
            table(
                ["id", "tier", "question", "answered from"],
                [
                    [m["id"], m["tier"], m["question"], m["answered_from"]]
                    for m in misses["out_of_scope"]
                ],
            )
        )
    return out


def questions_plots(ev: QuestionsEvaluation, data: dict[str, Any], out: Path) -> list[Path]:
    paths = []
    k = 5 if 5 in ev.ks else max(ev.ks)
    for level in ev.levels:
        groups = {
            mode: {
                f"Hit@{k}": by_level[level][f"hit@{k}"] or 0.0,
                f"MRR@{k}": by_level[level][f"mrr@{k}"] or 0.0,
                f"nDCG@{k}": by_level[level][f"ndcg@{k}"] or 0.0,
                f"Recall@{k}": by_level[level][f"recall@{k}"] or 0.0,
            }
            for mode, by_level in data["modes"].items()
        }
        paths.append(
            bar_plot(out / f"metrics_{level}.png", f"{level}-level retrieval by mode", groups)
        )
    n = max(1, len(ev.outcomes))
    paths.append(
        bar_plot(
            out / "tiers.png",
            "Which tier answered",
            {tier: {"share": count / n} for tier, count in data["tiers"].items()},
            ylabel="share of questions",
        )
    )
    return paths


def doc_calibration_plot(points: Sequence[DocPoint], choice: Choice, out: Path) -> Path:
    return curve_plot(
        out / "t_doc_precision_coverage.png",
        "Documents tier over t_doc",
        {"t_doc sweep": [(p.coverage, p.precision) for p in points]},
        xlabel="coverage (right answers from documents / in-scope questions)",
        ylabel="precision of the documents tier",
        marks={f"t_doc {choice.threshold}": (choice.coverage, choice.precision)},
    )
