"""Tier 1's decision (1/4): the candidate most probably right, if it is sure enough for this FAQ.

A stored question or phrasing asked word for word is the staff's own fix and is taken (unless
an entry with another answer holds the same phrasing). Otherwise every candidate is weighed
(``retrieval.faq.features``): those the guard or the school's contrasts rule out cannot answer;
the fitted scorer gives the rest a probability of being right, and the likeliest is accepted
when that probability reaches the judge's threshold (the risk target, calibrated on this FAQ:
``retrieval.faq.calibration``). Nothing is a hand-set similarity threshold any more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from retrieval.faq.candidates import FaqCandidate
from retrieval.faq.contrasts import Value
from retrieval.faq.features import Evidence, weigh_candidates
from retrieval.faq.judge import FaqJudge
from retrieval.faq.lexicon import Covering
from retrieval.guard.verdicts import Facets, GuardVerdict

# What became of a candidate, as a code the admin explains in its own words (``reason`` is
# the same in English, for logs, `tuvan ask --json` and the evaluation).
VerdictCode = Literal[
    "verbatim",  # asked word for word: accepted
    "accepted",
    "same_phrasing",  # asked word for word, but an entry with another answer has that phrasing
    "guard",  # the near-miss guard refused it (``guard`` says why)
    "contrast",  # it names another value where the school's FAQ tells values apart
    "unsure",  # the likeliest, but not sure enough for this FAQ's threshold
    "lower",  # less likely than the entry accepted or doubted
]


@dataclass(frozen=True)
class CandidateVerdict:
    candidate: FaqCandidate
    guard: GuardVerdict | None
    accepted: bool
    reason: str
    code: VerdictCode = "lower"
    rival_id: int | None = None  # same_phrasing: the entry with another answer
    probability: float | None = None  # the scorer's, for a candidate not ruled out
    contrast: tuple[tuple[str, Value, Value], ...] = ()


@dataclass(frozen=True)
class FaqDecision:
    accepted: FaqCandidate | None
    verdicts: tuple[CandidateVerdict, ...]
    reason: str
    threshold: float = 1.0  # the probability an entry needed
    probability: float | None = None  # the accepted (or likeliest) entry's

    @property
    def best_similarity(self) -> float:
        return max((v.candidate.similarity for v in self.verdicts), default=0.0)

    @property
    def considered(self) -> CandidateVerdict | None:
        """The likeliest candidate not ruled out (accepted or not)."""
        return next((v for v in self.verdicts if v.code in ("accepted", "unsure")), None)


def _same_answer(a: FaqCandidate, b: FaqCandidate) -> bool:
    return " ".join(a.answer.split()) == " ".join(b.answer.split())


def decide_faq(
    question: str,
    covering: Covering,
    candidates: Sequence[FaqCandidate],
    judge: FaqJudge,
    facets: Facets | None = None,
) -> FaqDecision:
    """URAG tier 1 (see the module docstring). ``question`` is the question as the guard reads
    it (restored, shorthand written out; ``facets``: what the judge's guard reads in it, when
    the caller has read it), ``covering`` its words whose coverage is weighed."""
    if not candidates:
        return FaqDecision(None, (), "no published FAQ entry", judge.threshold)
    taken, shared = _verbatim(candidates)
    if taken is not None:
        return taken
    rest = [c for c in candidates if c.faq_id not in {v.candidate.faq_id for v in shared}]
    evidence = weigh_candidates(
        question, covering, rest, judge.lexicon, judge.guard, judge.lexicon.contrasts, facets
    )
    open_ = [e for e in evidence if not e.ruled_out]
    probabilities: dict[int, float] = {}
    if open_ and judge.decision is not None:
        p = judge.decision.scorer.probabilities(np.asarray([e.values for e in open_]))
        probabilities = {e.candidate.faq_id: float(x) for e, x in zip(open_, p, strict=True)}
    best = max(open_, key=lambda e: probabilities.get(e.candidate.faq_id, 0.0), default=None)
    needed = judge.needs(best.candidate.faq_id) if best is not None else judge.threshold
    verdicts = [*shared, *(_verdict(e, best, probabilities, needed) for e in evidence)]
    verdicts.sort(key=_order)
    if best is None:
        reason = verdicts[0].reason if verdicts else "no published FAQ entry"
        return FaqDecision(None, tuple(verdicts), reason, judge.threshold)
    chance = probabilities.get(best.candidate.faq_id, 0.0)
    accepted = best.candidate if chance >= needed else None
    reason = next(v.reason for v in verdicts if v.candidate is best.candidate)
    return FaqDecision(accepted, tuple(verdicts), reason, needed, chance)


def _verbatim(
    candidates: Sequence[FaqCandidate],
) -> tuple[FaqDecision | None, list[CandidateVerdict]]:
    """A phrasing asked word for word is taken (the decision), unless an entry with another
    answer holds it too: such candidates are set aside (their verdicts) and the rest weighed."""
    shared: list[CandidateVerdict] = []
    for cand in candidates:
        if not cand.verbatim:
            continue
        rival = next(
            (
                c
                for c in candidates
                if c.verbatim and c.faq_id != cand.faq_id and not _same_answer(c, cand)
            ),
            None,
        )
        if rival is not None:
            why = f"entry {rival.faq_id} with another answer has the same phrasing"
            shared.append(CandidateVerdict(cand, None, False, why, "same_phrasing", rival.faq_id))
            continue
        lower = [
            CandidateVerdict(c, None, False, "lower than the accepted entry")
            for c in candidates
            if c is not cand
        ]
        first = CandidateVerdict(cand, None, True, "asked verbatim", "verbatim", probability=1.0)
        return FaqDecision(cand, (first, *lower), "asked verbatim", 1.0, 1.0), []
    return None, shared


def _verdict(
    e: Evidence, best: Evidence | None, probabilities: dict[int, float], threshold: float
) -> CandidateVerdict:
    cand = e.candidate
    if e.guard is not None and not e.guard.ok:
        return CandidateVerdict(cand, e.guard, False, f"near-miss guard: {e.guard.reason}", "guard")
    if e.contrast:
        said = "; ".join(
            f"{head} {' '.join(asked)} (the entry says {head} {' '.join(theirs)})"
            for head, asked, theirs in e.contrast
        )
        return CandidateVerdict(
            cand, e.guard, False, f"contrast: {said}", "contrast", contrast=e.contrast
        )
    p = probabilities.get(cand.faq_id, 0.0)
    if best is not None and cand is best.candidate:
        if p >= threshold:
            why = f"accepted: p {p:.3f} >= {threshold:.3f}"
            return CandidateVerdict(cand, e.guard, True, why, "accepted", probability=p)
        why = f"not sure enough: p {p:.3f} below {threshold:.3f}"
        return CandidateVerdict(cand, e.guard, False, why, "unsure", probability=p)
    why = f"less likely than the entry considered (p {p:.3f})"
    return CandidateVerdict(cand, e.guard, False, why, "lower", probability=p)


def _order(v: CandidateVerdict) -> tuple[int, float]:
    """The decided entry first, then the ruled-out ones (as the staff read why), then the rest
    by probability."""
    rank = {"accepted": 0, "unsure": 0, "same_phrasing": 1, "guard": 1, "contrast": 1}.get(
        v.code, 2
    )
    return rank, -(v.probability or 0.0)
