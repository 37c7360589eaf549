"""How sure tier 2 is of a quoted answer (1/4): the features its fitted scorer weighs, and the
decision to answer or abstain at the risk target (``TUVAN_ANSWER__DOCUMENTS_RISK``).

The features describe the quotes chosen (``bot.answer.extractive.Quote``): how much of the
question the lead unit holds (its score as a share of the question's weight), how much the best
passage holds, the passages' dense similarity, whether a unit holds the kind of value asked,
how many of the question's names it agrees with, whether it is a staff-approved FAQ answer, and
the share of a multi-part question's parts answered. Every one is "more is likelier right":
the scorer is monotone in each (retrieval.decisions).

What it predicts is that the answer is *sound*: it quotes at least one fact of what is asked.
The risk target bounds the share of answers that quote nothing asked (confidently wrong ones,
bot.evaluation.documents_fit); a partial answer, cited under the disclaimer, is still given.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.answer.extractive import Quote
from retrieval.decisions.store import Decision
from retrieval.search.hits import Hit

DOC_FEATURES = ("share", "evidence", "similarity", "holds", "agrees", "faq", "parts")
DOC_UP = DOC_FEATURES


def documents_features(
    quotes: Sequence[Quote], hits: Sequence[Hit], parts_answered: float = 1.0
) -> tuple[float, ...]:
    """The features of an answer made of ``quotes`` from ``hits`` (``DOC_FEATURES`` order)."""
    if not quotes:
        return (0.0,) * len(DOC_FEATURES)
    quoted = [hits[q.hit_index] for q in quotes if q.hit_index < len(hits)]
    return (
        max(q.share for q in quotes),
        max(q.evidence for q in quotes),
        max((h.similarity for h in quoted), default=0.0),
        float(any(q.holds for q in quotes)),
        float(min(max(q.agrees for q in quotes), 2)),
        float(any(h.faq_id is not None for h in quoted)),
        parts_answered,
    )


def documents_confidence(
    decision: Decision | None, features: tuple[float, ...], risk: float
) -> tuple[float | None, bool]:
    """The scorer's probability that the answer is sound, and whether it is sure enough to
    answer at ``risk`` (with no fitted scorer: no probability, and it answers)."""
    if decision is None:
        return None, True
    p = decision.scorer.probability(features)
    return p, p >= decision.point(risk).threshold
