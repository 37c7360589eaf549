"""Why an answer is what it is, as data: what tier 1 made of each FAQ entry it read, and what
the documents gave (or why they gave nothing).

Stored with each reply (``details["why"]``) next to the English ``reason``, so that the admin
can say it in the staff's words and languages (admin.explanations) without reading English
back. Plain JSON values only: it goes into a JSONB column as it is.

Shape::

    {"faq": [step, ...],          # the entries tier 1 weighed, best first (not those below)
     "documents": {...},          # tier 2: answered, or why not; absent when tier 1 answered
     "small_talk": "greeting",    # or one of these instead: no search was needed,
     "not_a_question": true,      #   the message asked nothing,
     "error": "TimeoutError"}     #   answering failed

A step is ``{"result": code, "faq_id": …}`` with what the code needs (retrieval.faq.decision's
``VerdictCode``: the probability and the threshold it had to reach, the guard's conflicts and
missing values, the school's contrast, the rival entry). ``documents`` is
``{"result": "answered", "how", "passages", "faq_passage"}``,
``{"result": "below", "best", "threshold"}``, ``{"result": "out_of_scope", "named": [...]}``,
``{"result": "abstained", "passages"}`` or ``{"result": "not_cited", "passages"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from retrieval.faq.decision import CandidateVerdict, FaqDecision
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import GuardVerdict

Why = dict[str, Any]
Composed = Literal["extractive", "by_part", "facts_by_part", "llm"]

FAQ_STEPS = 5  # at most the candidates tier 1 reads


def faq_steps(decision: FaqDecision) -> list[dict[str, Any]]:
    """What tier 1 made of each entry it weighed, best first; an empty list when no published
    entry came near."""
    return [
        faq_step(v, decision.threshold) for v in decision.verdicts[:FAQ_STEPS] if v.code != "lower"
    ]


def faq_step(verdict: CandidateVerdict, threshold: float) -> dict[str, Any]:
    """What became of one candidate, as data."""
    cand = verdict.candidate
    step: dict[str, Any] = {
        "result": verdict.code,
        "faq_id": cand.faq_id,
        "similarity": round(cand.similarity, 4),
    }
    if verdict.probability is not None:
        step["probability"] = round(verdict.probability, 4)
    if verdict.code in ("unsure", "accepted"):
        step["threshold"] = round(threshold, 4)
    elif verdict.code == "same_phrasing":
        step["rival_id"] = verdict.rival_id
    elif verdict.code == "guard" and verdict.guard is not None:
        step.update(_guard(verdict.guard))
    elif verdict.code == "contrast":
        step["contrast"] = [
            {"head": head, "question": " ".join(asked), "entry": " ".join(theirs)}
            for head, asked, theirs in verdict.contrast
        ]
    return step


def _guard(verdict: GuardVerdict) -> dict[str, Any]:
    return {
        "conflicts": [
            {
                "category": c.category,
                "label": c.label or c.category,
                "question": sorted(c.query_values),
                "entry": sorted(c.faq_values),
            }
            for c in verdict.conflicts
        ],
        "missing": [
            {"category": m.category, "label": m.label or m.category, "values": sorted(m.values)}
            for m in verdict.missing
        ],
    }


def documents_answered(how: Composed, passages: int, faq_passage: int | None) -> Why:
    """Tier 2 answered from ``passages`` passages (the first an FAQ entry's, if ``faq_passage``)."""
    return {
        "documents": {
            "result": "answered",
            "how": how,
            "passages": passages,
            "faq_passage": faq_passage,
        }
    }


def documents_missed(
    best: float,
    t_doc: float,
    passages: int,
    out_of_scope: Mapping[str, frozenset[str]],
    guard: NearMissGuard | None,
    *,
    abstained: bool,
) -> Why:
    """Why tier 2 gave nothing: no passage reached ``t_doc``; the question names what the
    passages never do; none of them holds what is asked; or the LLM cited no passage given."""
    if out_of_scope:
        named = [
            {
                "category": category,
                "label": guard.label(category) if guard is not None else category,
                "values": sorted(values),
            }
            for category, values in out_of_scope.items()
        ]
        return {"documents": {"result": "out_of_scope", "named": named}}
    if abstained:
        return {"documents": {"result": "abstained", "passages": passages}}
    if passages:
        return {"documents": {"result": "not_cited", "passages": passages}}
    return {"documents": {"result": "below", "best": round(best, 4), "threshold": t_doc}}
