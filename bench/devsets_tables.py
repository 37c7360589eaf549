"""The report tables of devsets: one row per question set for retrieval, answers, the FAQ tier and
multi-part questions."""

from __future__ import annotations

from typing import Any

from question_sets import MODES


def retrieval_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = ["set", "level", "mode"] + [
        f"{m} {form}" for m in ("Hit@1", "Hit@5", "Hit@10", "MRR@10") for form in ("w", "u")
    ]
    rows = []
    for name, data in results.items():
        level = data["level"]
        for mode in MODES:
            written = data["modes"][mode][level]
            folded = data["unaccented"]["modes"][mode][level]
            rows.append(
                [name, level, mode]
                + [
                    f"{entry[key]:.3f}"
                    for key in ("hit@1", "hit@5", "hit@10", "mrr@10")
                    for entry in (written, folded)
                ]
            )
    return header, rows


def answer_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "set",
        "form",
        "faq",
        "documents",
        "fallback",
        "confidently wrong",
        "key facts (answered)",
        "documents answers, median / p90 chars",
    ]
    rows = []
    for name, data in results.items():
        for form, d in (("written", data), ("unaccented", data["unaccented"])):
            rate = d["key_facts"]["rate_answered"]
            tiers = d["tiers"]
            rows.append(
                [
                    name,
                    form,
                    tiers["faq"],
                    tiers["documents"],
                    tiers["fallback"],
                    d["key_facts"].get("confidently_wrong", "–"),
                    "–" if rate is None else f"{rate:.3f}",
                    _lengths(d["answer_length"]["documents"]),
                ]
            )
    return header, rows


def _lengths(spread: dict[str, Any]) -> str:
    return f"{spread['median']:.0f} / {spread['p90']}" if spread["answers"] else "–"


def faq_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "FAQ set",
        "form",
        "precision",
        "coverage",
        "false accepts",
        "near-miss FA",
        "OOS FA",
        "wrong verbatim answers",
    ]
    rows = []
    for name, forms in results.items():
        for form, data in forms.items():
            wrong = sum(1 for m in data["misses"] if m["got"] is not None)
            rows.append(
                [name, form]
                + [
                    f"{data[k]:.3f}"
                    for k in (
                        "precision",
                        "coverage",
                        "false_accept",
                        "false_accept_near_miss",
                        "false_accept_out_of_scope",
                    )
                ]
                + [wrong]
            )
    return header, rows


def multi_part_rows(results: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "set",
        "questions",
        "searched",
        "level",
        "Hit@5",
        "Recall@5",
        "all sources@5",
        "MRR@10",
    ]
    rows = []
    for name, data in results.items():
        for label in ("one query", "split"):
            m = data[label]
            rows.append(
                [name, data["questions"], label, m["level"]]
                + [f"{m.get(k, 0.0):.3f}" for k in ("hit@5", "recall@5", "all@5", "mrr@10")]
            )
    return header, rows
