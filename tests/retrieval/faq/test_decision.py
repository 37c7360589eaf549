"""Tier 1's decision says what became of each candidate as a code (and the rival entry), which
the admin explains in its own words; the English reasons stay as they were."""

from __future__ import annotations

from retrieval.faq.candidates import FaqCandidate
from retrieval.faq.decision import FaqDecision, decide_faq


def candidate(
    faq_id: int,
    similarity: float,
    answer: str,
    *,
    score: float | None = None,
    coverage: float = 1.0,
    unsaid: tuple[str, ...] = (),
    verbatim: bool = False,
) -> FaqCandidate:
    return FaqCandidate(
        faq_id=faq_id,
        external_id=None,
        question=f"câu hỏi {faq_id}",
        matched_text=f"câu hỏi {faq_id}",
        answer=answer,
        source=None,
        source_url=None,
        language="vi",
        similarity=similarity,
        score=similarity if score is None else score,
        coverage=coverage,
        unsaid=unsaid,
        verbatim=verbatim,
    )


def decide(*candidates: FaqCandidate, min_coverage: float = 0.0) -> FaqDecision:
    return decide_faq(
        "q", candidates, threshold=0.9, margin=0.02, guard=None, min_coverage=min_coverage
    )


def test_each_verdict_has_a_code() -> None:
    accepted = decide(candidate(1, 0.95, "a"), candidate(2, 0.5, "b"))
    assert [(v.code, v.accepted) for v in accepted.verdicts] == [
        ("accepted", True),
        ("lower", False),
    ]
    assert accepted.verdicts[0].reason == "accepted"
    below = decide(candidate(1, 0.85, "a"))
    assert below.verdicts[0].code == "similarity"
    assert below.reason == "similarity 0.850 below t_faq 0.900"
    ambiguous = decide(candidate(1, 0.95, "a", score=0.5), candidate(2, 0.94, "b", score=0.49))
    assert (ambiguous.verdicts[0].code, ambiguous.verdicts[0].rival_id) == ("ambiguous", 2)
    thin = decide(candidate(1, 0.95, "a", coverage=0.3, unsaid=("ktx",)), min_coverage=0.6)
    assert thin.verdicts[0].code == "coverage"


def test_a_verbatim_phrasing_shared_with_another_answer_names_the_rival() -> None:
    shared = decide(candidate(1, 1.0, "a", verbatim=True), candidate(2, 1.0, "b", verbatim=True))
    first = shared.verdicts[0]
    assert (first.code, first.rival_id, first.accepted) == ("same_phrasing", 2, False)
    alone = decide(candidate(3, 1.0, "c", verbatim=True))
    assert alone.verdicts[0].code == "verbatim"
    assert alone.accepted is not None
