"""Scoring: retrieval metrics at k, key facts in answers, FAQ precision / coverage / false accepts.

The rules are those of ../shared/datasets/README.md ("How to score"): retrieved chunks are mapped
to units (a chunk id, a source file, or a (source file, page)), de-duplicated keeping the first
rank; nDCG uses binary gains and an ideal DCG over min(k, #relevant); key facts are compared after
NFD, combining marks removed, đ → d, lower case and collapsed whitespace.
"""

from __future__ import annotations

import math
import re
import statistics
import unicodedata
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from bot.evaluation.data import FaqQuery

DEFAULT_KS = (1, 3, 5, 10)
METRICS = ("hit", "mrr", "ndcg", "recall")


def norm(text: str) -> str:
    """Accent-, case- and spacing-insensitive form of ``text`` for key-fact containment."""
    text = unicodedata.normalize("NFD", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    text = text.replace("đ", "d").replace("Đ", "D").lower()
    return re.sub(r"\s+", " ", text).strip()


def facts_found(answer: str, facts: Sequence[str]) -> int:
    body = norm(answer)
    return sum(norm(fact) in body for fact in facts)


def first_ranks(units: Iterable[Hashable]) -> list[Hashable]:
    """Units in rank order, each kept at its first (best) rank."""
    return list(dict.fromkeys(units))


def ranking_metrics(
    ranked: Sequence[Hashable], relevant: set[Hashable], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, float]:
    """``hit@k``, ``mrr@k``, ``ndcg@k``, ``recall@k`` and ``all@k`` (every relevant unit in the
    top k, for questions that need several sources) of one de-duplicated ranking."""
    out: dict[str, float] = {}
    first = next((i for i, u in enumerate(ranked, start=1) if u in relevant), None)
    for k in ks:
        top = ranked[:k]
        found = sum(u in relevant for u in top)
        dcg = sum(1 / math.log2(i + 1) for i, u in enumerate(top, start=1) if u in relevant)
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(k, len(relevant)) + 1))
        out[f"hit@{k}"] = float(found > 0)
        out[f"mrr@{k}"] = 1 / first if first is not None and first <= k else 0.0
        out[f"ndcg@{k}"] = dcg / ideal if ideal else 0.0
        out[f"recall@{k}"] = found / len(relevant) if relevant else 0.0
        out[f"all@{k}"] = float(bool(relevant) and found == len(relevant))
    return out


def mean_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: statistics.fmean(r[key] for r in rows) for key in rows[0]}


# -- FAQ tier ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaqRates:
    precision: float  # of the queries tier 1 answered, the share with the expected entry
    coverage: float  # of the paraphrases, the share answered with the expected entry
    false_accept: float  # of near misses + out of scope, the share answered with another entry
    false_accept_near_miss: float
    false_accept_out_of_scope: float
    answered: int
    queries: int

    def as_dict(self) -> dict[str, float | int]:
        return {
            "precision": self.precision,
            "coverage": self.coverage,
            "false_accept": self.false_accept,
            "false_accept_near_miss": self.false_accept_near_miss,
            "false_accept_out_of_scope": self.false_accept_out_of_scope,
            "answered": self.answered,
            "queries": self.queries,
        }


def faq_rates(queries: Sequence[FaqQuery], answers: Sequence[str | None]) -> FaqRates:
    """Score tier 1's answer (an FAQ id, or None for an abstention) to each query.

    Answering a query whose ``expected_faq`` is null is wrong; answering a near miss with its
    expected entry is right, and abstaining there is a miss, not an error. An entry the query
    lists as ``also_correct`` is right too.
    """
    answered = right = para = para_ok = near = near_fa = oos = oos_fa = 0
    for q, got in zip(queries, answers, strict=True):
        if got is not None:
            answered += 1
            right += q.answered_by(got)
        wrong = got is not None and not q.answered_by(got)
        if q.kind == "paraphrase":
            para += 1
            para_ok += q.answered_by(got)
        elif q.kind == "near_miss":
            near += 1
            near_fa += wrong
        else:
            oos += 1
            oos_fa += wrong
    return FaqRates(
        precision=right / answered if answered else 1.0,
        coverage=para_ok / para if para else 0.0,
        false_accept=(near_fa + oos_fa) / (near + oos) if near + oos else 0.0,
        false_accept_near_miss=near_fa / near if near else 0.0,
        false_accept_out_of_scope=oos_fa / oos if oos else 0.0,
        answered=answered,
        queries=len(queries),
    )


def sweep(low: float, high: float, step: float) -> list[float]:
    if step <= 0 or high < low:
        raise ValueError(f"need low <= high and step > 0, got {low}, {high}, {step}")
    n = round((high - low) / step)
    return [round(low + i * step, 4) for i in range(n + 1)]


@dataclass(frozen=True)
class Choice:
    threshold: float
    met: bool  # the required precision was reached at this threshold
    precision: float
    coverage: float


def choose_threshold(
    curve: Sequence[tuple[float, float, float]], required_precision: float
) -> Choice:
    """From (threshold, precision, coverage) points: the highest coverage whose precision meets
    the requirement (ties: the middle of the tied run, away from both cliffs); when none does,
    the best precision among the points keeping at least half the best coverage (so that a
    threshold answering two questions does not win on luck), flagged as not met."""
    meeting = [p for p in curve if p[1] >= required_precision and p[2] > 0]
    if not meeting:
        most = max(p[2] for p in curve)
        useful = [p for p in curve if p[2] >= most / 2 and p[2] > 0] or list(curve)
        t, precision, coverage = max(useful, key=lambda p: (p[1], p[2], -p[0]))
        return Choice(t, False, precision, coverage)
    best = max(p[2] for p in meeting)
    tied = [p for p in meeting if p[2] == best]
    t, precision, coverage = tied[len(tied) // 2]
    return Choice(t, True, precision, coverage)
