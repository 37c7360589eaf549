"""Tier 2's answer-or-abstain fitting (bot.evaluation.documents_fit): the scorer learns which
answers quote something asked, the threshold bounds the confidently wrong share on sets it never
saw, and each set is answered by what the others fitted."""

from __future__ import annotations

import numpy as np

from bot.answer.confidence import DOC_FEATURES
from bot.evaluation.documents_fit import (
    DocExample,
    DocSet,
    choose_thresholds,
    fit_documents,
    leave_one_out,
    pooled_wrong_share,
    probabilities,
    rates,
)


def _example(i: int, share: float, found: int, facts: int = 2) -> DocExample:
    # share and evidence carry the signal; the rest are the same for every answer
    features = (share, share, 0.85, 1.0, 1.0, 0.0, 1.0)
    assert len(features) == len(DOC_FEATURES)
    return DocExample(f"q{i}", "written", features, found == facts > 0, found, facts)


def _set(name: str, seed: int, n: int = 80) -> DocSet:
    """Answers whose lead unit holds more of the question more often hold a key fact."""
    rng = np.random.default_rng(seed)
    examples = []
    for i in range(n):
        share = float(rng.uniform(0, 1))
        sound = rng.uniform(0, 1) < share
        found = 0 if not sound else (2 if rng.uniform(0, 1) < 0.5 else 1)
        examples.append(_example(i, share, found))
    examples.append(_example(n, 0.05, 0, facts=0))  # out of scope, answered: never sound
    return DocSet(name, tuple(examples), n)


SETS = [_set("a", 1), _set("b", 2), _set("c", 3)]


def test_a_partial_answer_is_sound_and_an_answer_of_nothing_asked_or_out_of_scope_is_not() -> None:
    partial, empty, out_of_scope = _example(0, 0.5, 1), _example(1, 0.5, 0), _example(2, 0.5, 0, 0)
    assert (partial.sound, partial.right) == (True, False)
    assert not empty.sound
    assert not out_of_scope.sound


def test_the_scorer_rises_with_what_the_quote_holds() -> None:
    scorer = fit_documents(SETS)
    low, high = scorer.probabilities(
        np.asarray([_example(0, 0.1, 0).features, _example(1, 0.9, 0).features])
    )
    assert high > low + 0.3


def test_each_threshold_keeps_the_confidently_wrong_share_under_its_risk() -> None:
    scorer = fit_documents(SETS)
    scored = [(s, probabilities(scorer, s)) for s in SETS]
    points = choose_thresholds(scored, risks=(0.1, 0.3))
    strict, loose = points
    assert strict.threshold > loose.threshold
    for point in points:
        assert pooled_wrong_share(scored, point.threshold) <= point.risk
        # the lowest such threshold
        assert pooled_wrong_share(scored, round(point.threshold - 0.01, 2)) > point.risk
    # the looser target answers more
    answered = [sum(rates(s, p, q.threshold).answered for s, p in scored) for q in points]
    assert answered[1] > answered[0]


def test_every_set_is_answered_by_a_scorer_fitted_without_it() -> None:
    folds = leave_one_out(SETS)
    assert [f.name for f in folds] == ["a", "b", "c"]
    for fold in folds:
        refit = fit_documents([s for s in SETS if s.name != fold.name])
        assert np.allclose(fold.p, probabilities(refit, fold.doc_set))
        r = fold.rates(0.3)
        assert r.answered <= len(fold.doc_set.examples)
        assert r.wrong_no_fact <= r.answered


def test_a_set_that_answers_two_of_its_questions_one_wrongly_does_not_move_the_threshold() -> None:
    scorer = fit_documents(SETS)
    scored = [(s, probabilities(scorer, s)) for s in SETS]
    # 80 questions, two answered, one with no key fact: half its answers wrong, yet it is one
    # wrong answer in a hundred and sixty answers' worth of questions
    sparse = DocSet("sparse", (_example(0, 0.3, 0), _example(1, 0.3, 2)), 80)
    with_sparse = [*scored, (sparse, probabilities(scorer, sparse))]
    assert choose_thresholds(with_sparse, risks=(0.3,)) == choose_thresholds(scored, risks=(0.3,))
    # ...while the mean of the sets' shares would have to climb over it
    shares = [rates(s, p, 0.0).confidently_wrong_share for s, p in with_sparse]
    assert shares[-1] == 0.5
