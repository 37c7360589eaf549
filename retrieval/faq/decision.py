"""Tier 1's decision: the best candidate the guard lets through, held to the thresholds and
the margin to a rival with another answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from retrieval.faq.candidates import FaqCandidate
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import GuardVerdict

# What became of a candidate, as a code the admin explains in its own words (``reason`` is
# the same in English, for logs, `tuvan ask --json` and the evaluation).
VerdictCode = Literal[
    "verbatim",  # asked word for word: accepted
    "accepted",
    "same_phrasing",  # asked word for word, but an entry with another answer has that phrasing
    "guard",  # the near-miss guard refused it (``guard`` says why)
    "similarity",  # below t_faq
    "coverage",  # holds too few of the question's words
    "ambiguous",  # an entry with another answer is within the margin
    "lower",  # not considered: below the entry accepted or doubted
]


@dataclass(frozen=True)
class CandidateVerdict:
    candidate: FaqCandidate
    guard: GuardVerdict | None
    accepted: bool
    reason: str
    code: VerdictCode = "lower"
    rival_id: int | None = None  # same_phrasing, ambiguous: the entry with another answer


@dataclass(frozen=True)
class FaqDecision:
    accepted: FaqCandidate | None
    verdicts: tuple[CandidateVerdict, ...]
    reason: str

    @property
    def best_similarity(self) -> float:
        return self.verdicts[0].candidate.similarity if self.verdicts else 0.0


def _same_answer(a: FaqCandidate, b: FaqCandidate) -> bool:
    return " ".join(a.answer.split()) == " ".join(b.answer.split())


def decide_faq(
    question: str,
    candidates: Sequence[FaqCandidate],
    *,
    threshold: float,
    margin: float,
    guard: NearMissGuard | None,
    min_coverage: float = 0.0,
) -> FaqDecision:
    """URAG tier 1: the best candidate the guard lets through, if it is sure enough.

    Candidates come best first (``faq_candidates``). One the guard refuses is skipped: a
    question about another major may still match the entry about that major. The first one it
    lets through is accepted or nothing is (see the module docstring for the three tests).
    """
    verdicts: list[CandidateVerdict] = []
    reason = "no published FAQ entry"
    for n, cand in enumerate(candidates):
        if cand.verbatim:
            rival = _rival(cand, candidates, verbatim_only=True)
            if rival is None:
                verdicts.append(CandidateVerdict(cand, None, True, "asked verbatim", "verbatim"))
                return _decided(cand, verdicts, candidates[n + 1 :], "asked verbatim")
            why = f"entry {rival.faq_id} with another answer has the same phrasing"
            verdicts.append(CandidateVerdict(cand, None, False, why, "same_phrasing", rival.faq_id))
            reason = why
            continue
        verdict = _guard(guard, question, cand)
        if verdict is not None and not verdict.ok:
            why = f"near-miss guard: {verdict.reason}"
            verdicts.append(CandidateVerdict(cand, verdict, False, why, "guard"))
            reason = why
            continue
        doubt = _doubt(cand, candidates, threshold, margin, min_coverage)
        if doubt is not None:
            code, why, rival_id = doubt
            verdicts.append(CandidateVerdict(cand, verdict, False, why, code, rival_id))
            rest = [
                CandidateVerdict(c, None, False, "lower than the entry considered")
                for c in candidates[n + 1 :]
            ]
            return FaqDecision(None, tuple(verdicts + rest), why)
        verdicts.append(CandidateVerdict(cand, verdict, True, "accepted", "accepted"))
        return _decided(cand, verdicts, candidates[n + 1 :], "accepted")
    return FaqDecision(None, tuple(verdicts), reason)


def _doubt(
    cand: FaqCandidate,
    candidates: Sequence[FaqCandidate],
    threshold: float,
    margin: float,
    min_coverage: float,
) -> tuple[VerdictCode, str, int | None] | None:
    """Why the first candidate the guard lets through is not sure enough (its code, the reason
    and the rival entry, if one), or None."""
    if cand.similarity < threshold:
        return "similarity", f"similarity {cand.similarity:.3f} below t_faq {threshold:.3f}", None
    if cand.coverage < min_coverage:
        unsaid = ", ".join(cand.unsaid[:6])
        why = (
            f"the entry covers {cand.coverage:.2f} of the question's words "
            f"(below {min_coverage:.2f}); not in it: {unsaid}"
        )
        return "coverage", why, None
    rival = _rival(cand, candidates)
    if rival is not None and cand.score - rival.score < margin:
        why = (
            f"ambiguous: entry {rival.faq_id} with another answer is within {margin:.3f} "
            f"({rival.score:.3f} vs {cand.score:.3f})"
        )
        return "ambiguous", why, rival.faq_id
    return None


def _rival(
    cand: FaqCandidate, candidates: Sequence[FaqCandidate], *, verbatim_only: bool = False
) -> FaqCandidate | None:
    """The best other candidate with another answer (verbatim ones only, if asked)."""
    return next(
        (
            c
            for c in candidates
            if c.faq_id != cand.faq_id
            and not _same_answer(c, cand)
            and (c.verbatim or not verbatim_only)
        ),
        None,
    )


def _decided(
    cand: FaqCandidate,
    verdicts: list[CandidateVerdict],
    rest: Sequence[FaqCandidate],
    reason: str,
) -> FaqDecision:
    lower = [CandidateVerdict(c, None, False, "lower than the accepted entry") for c in rest]
    return FaqDecision(cand, tuple(verdicts + lower), reason)


def _guard(guard: NearMissGuard | None, question: str, cand: FaqCandidate) -> GuardVerdict | None:
    if guard is None:
        return None
    # Conflicts are read against the entry's question (a variant may be phrased loosely, but
    # the question is what the answer answers); asked slots against its question and answer.
    return guard.check(question, cand.question, cand.answer)
