"""The answers of a questions evaluation summed up: tiers, key facts, answer lengths,
out-of-scope handling and the judge's grades (for ``questions_report`` and the benchmarks)."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bot.answer.replies import answer_body
from bot.evaluation.questions import AnswerOutcome


def tier_counts(outcomes: Sequence[AnswerOutcome]) -> dict[str, int]:
    counts = Counter(o.answer.tier for o in outcomes)
    return {tier: counts.get(tier, 0) for tier in ("faq", "documents", "fallback")}


def key_facts_summary(outcomes: Sequence[AnswerOutcome]) -> dict[str, Any]:
    """Key facts over the in-scope questions that list some: all found, overall (a fallback
    counts as a miss), among the answered ones, and per tier; plus the mean share found."""
    scope = [o for o in outcomes if not o.question.out_of_scope and o.question.key_facts]
    answered = [o for o in scope if o.answer.tier != "fallback"]

    def rate(rows: Sequence[AnswerOutcome]) -> float | None:
        return sum(o.complete for o in rows) / len(rows) if rows else None

    return {
        "questions": len(scope),
        "answered": len(answered),
        "rate": rate(scope),
        "rate_answered": rate(answered),
        # Answered with not one key fact, or an out-of-scope question answered at all: the
        # confidently wrong replies (a fallback is never one).
        "confidently_wrong": sum(o.found == 0 for o in answered)
        + sum(o.question.out_of_scope and not o.right for o in outcomes),
        "mean_fraction": (
            sum(o.found / len(o.question.key_facts) for o in scope) / len(scope) if scope else None
        ),
        "by_tier": {
            tier: {"questions": len(rows), "rate": rate(rows)}
            for tier in ("faq", "documents", "fallback")
            if (rows := [o for o in scope if o.answer.tier == tier])
        },
    }


def answer_lengths(outcomes: Sequence[AnswerOutcome]) -> dict[str, Any]:
    """How long the documents answers are, in characters before their sources: the median and
    the 90th percentile, over all of them and over the factoid questions (3/6)."""

    def spread(rows: Sequence[AnswerOutcome]) -> dict[str, Any]:
        sizes = sorted(len(answer_body(o.answer).strip()) for o in rows)
        if not sizes:
            return {"answers": 0, "median": None, "p90": None}
        return {
            "answers": len(sizes),
            "median": statistics.median(sizes),
            "p90": sizes[min(len(sizes) - 1, math.ceil(0.9 * len(sizes)) - 1)],
        }

    documents = [o for o in outcomes if o.answer.tier == "documents"]
    return {
        "documents": spread(documents),
        "factoid": spread([o for o in documents if o.question.type == "factoid"]),
    }


def out_of_scope_summary(outcomes: Sequence[AnswerOutcome]) -> dict[str, Any]:
    rows = [o for o in outcomes if o.question.out_of_scope]
    right = sum(o.right for o in rows)
    return {
        "questions": len(rows),
        "fallback": right,
        "answered_wrongly": len(rows) - right,
        "fallback_rate": right / len(rows) if rows else None,
    }


def judge_summary(outcomes: Sequence[AnswerOutcome]) -> dict[str, Any] | None:
    judged = [o for o in outcomes if o.judged is not None]
    if not judged:
        return None
    return {"questions": len(judged), "correct": sum(bool(o.judged) for o in judged)}
