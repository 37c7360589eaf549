"""Tier 1's decision (1/4): a phrasing asked word for word is taken; otherwise the likeliest
candidate nothing rules out is accepted when its probability reaches the judge's threshold; and
every candidate's verdict says what became of it, as a code the admin explains."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.answer.parts import AnswererParts
from bot.core.errors import ConfigError
from retrieval.decisions.scorer import MonotoneScorer
from retrieval.decisions.store import Decision, Decisions, OperatingPoint
from retrieval.faq.calibration import Calibration
from retrieval.faq.candidates import FaqCandidate
from retrieval.faq.decision import FaqDecision, decide_faq
from retrieval.faq.features import FEATURES, UP, weigh_candidates
from retrieval.faq.judge import FaqJudge, make_judge
from retrieval.faq.lexicon import Covering, FaqLexicon, LexiconEntry

ENTRIES = {
    1: ("Học phí ngành Khoa học Máy tính là bao nhiêu?", "32.500.000 đồng/năm."),
    2: ("Điểm chuẩn cơ sở phía Bắc năm 2025?", "Cơ sở phía Bắc: 25,5 điểm."),
    3: ("Điểm chuẩn cơ sở phía Nam năm 2025?", "Cơ sở phía Nam: 24 điểm."),
}


def scorer() -> MonotoneScorer:
    """p = σ(20 · (similarity − 0.9)): a similarity of 0.95 is 0.73, of 0.99 is 0.86."""
    weights = tuple(20.0 if f == "similarity" else 0.0 for f in FEATURES)
    return MonotoneScorer(FEATURES, frozenset(UP), {}, (1.0,) * len(FEATURES), weights, -18.0)


@pytest.fixture
def judge(parts: AnswererParts) -> FaqJudge:
    lexicon = FaqLexicon(
        [LexiconEntry(i, f"e{i}", q, a, None, None, "vi", ()) for i, (q, a) in ENTRIES.items()],
        parts.processor,
    )
    decision = Decision(scorer(), (OperatingPoint(0.01, 0.8, None),))
    return make_judge(lexicon, parts.processor, parts.guard, decision, 0.01)


def candidate(faq_id: int, similarity: float, *, verbatim: bool = False) -> FaqCandidate:
    question, answer = ENTRIES[faq_id]
    return FaqCandidate(
        faq_id=faq_id,
        external_id=f"e{faq_id}",
        question=question,
        matched_text=question,
        answer=answer,
        source=None,
        source_url=None,
        language="vi",
        similarity=similarity,
        score=similarity,
        verbatim=verbatim,
    )


def decide(judge: FaqJudge, question: str, *candidates: FaqCandidate) -> FaqDecision:
    return decide_faq(question, Covering(()), candidates, judge)


def test_the_likeliest_candidate_is_accepted_at_the_threshold(judge: FaqJudge) -> None:
    assert judge.threshold == pytest.approx(0.8)  # the floor: a three-entry FAQ is too small
    sure = decide(judge, "học phí ngành khoa học máy tính", candidate(1, 0.99))
    assert sure.accepted is not None
    assert sure.accepted.faq_id == 1
    assert sure.verdicts[0].code == "accepted"
    assert sure.probability == pytest.approx(0.858, abs=0.01)
    unsure = decide(judge, "học phí ngành khoa học máy tính", candidate(1, 0.95))
    assert unsure.accepted is None
    assert unsure.verdicts[0].code == "unsure"
    assert unsure.reason.startswith("not sure enough: p 0.731 below 0.800")


def test_a_phrasing_asked_word_for_word_is_taken_unless_another_answer_holds_it(
    judge: FaqJudge,
) -> None:
    taken = decide(judge, "x", candidate(1, 1.0, verbatim=True), candidate(2, 0.9))
    assert taken.accepted is not None
    assert taken.verdicts[0].code == "verbatim"
    shared = decide(judge, "x", candidate(2, 1.0, verbatim=True), candidate(3, 1.0, verbatim=True))
    assert shared.accepted is None
    assert {(v.code, v.rival_id) for v in shared.verdicts} == {
        ("same_phrasing", 3),
        ("same_phrasing", 2),
    }


def test_an_entry_naming_another_campus_the_faq_sets_apart_is_ruled_out(
    judge: FaqJudge,
) -> None:
    # "phía Bắc"/"phía Nam" are learned from the FAQ's own two questions, not from the vocabulary
    decision = decide(
        judge, "điểm chuẩn cơ sở phía Nam 2025", candidate(2, 0.99), candidate(3, 0.97)
    )
    assert decision.accepted is not None
    assert decision.accepted.faq_id == 3
    north = next(v for v in decision.verdicts if v.candidate.faq_id == 2)
    assert north.code == "contrast"
    assert north.contrast == (("phia", ("nam",), ("bac",)),)


def test_the_guard_still_rules_out_another_major(judge: FaqJudge) -> None:
    decision = decide(judge, "Học phí ngành Kỹ thuật Phần mềm là bao nhiêu?", candidate(1, 0.99))
    assert decision.accepted is None
    assert decision.verdicts[0].code == "guard"


def test_without_a_fitted_scorer_only_phrasings_asked_word_for_word_answer(
    judge: FaqJudge,
) -> None:
    bare = replace(judge, decision=None, point=None, threshold=1.01, calibration=Calibration())
    assert decide(bare, "học phí ngành khoa học máy tính", candidate(1, 0.999)).accepted is None
    assert decide(bare, "x", candidate(1, 1.0, verbatim=True)).accepted is not None


def test_an_entry_more_specific_than_the_question_is_weighed_as_saying_what_was_not_asked(
    judge: FaqJudge,
) -> None:
    # Entry 2 asks about one campus's cut-off; "điểm chuẩn năm 2025" names no campus, so the
    # entry's "phía Bắc" is unasked, while the entry's own phrasing leaves nothing unasked.
    def unasked(question: str) -> tuple[float, float]:
        (weighed,) = weigh_candidates(
            question,
            Covering(()),
            [candidate(2, 0.95)],
            judge.lexicon,
            None,
            judge.lexicon.contrasts,
        )
        return weighed.feature("entry_unasked"), weighed.feature("entry_unasked_rare")

    share, rarest = unasked("điểm chuẩn năm 2025 là bao nhiêu")
    assert 0.2 < share < 1.0
    assert rarest > 0.5  # "bắc" is held by one entry of three: among the rarest words
    assert unasked("Điểm chuẩn cơ sở phía Bắc năm 2025 là bao nhiêu?") == (0.0, 0.0)


def test_a_decisions_file_fitted_on_other_features_is_refused_at_start(
    parts: AnswererParts,
) -> None:
    n = len(FEATURES) - 1  # as fitted before a feature was added
    old = MonotoneScorer(FEATURES[:n], frozenset(UP), {}, (1.0,) * n, (0.0,) * n, 0.0)
    decisions = Decisions(faq=Decision(old, (OperatingPoint(0.01, 0.8, None),)))
    with pytest.raises(ConfigError, match="fit it again"):
        replace(parts, decisions=decisions)
