"""The fitted scorer (1/4): it moves one way in each feature, says probabilities, survives its
data file, and the file is checked when read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bot.core.errors import ConfigError
from retrieval.decisions.scorer import MonotoneScorer, fit_scorer
from retrieval.decisions.store import (
    Decision,
    OperatingPoint,
    decision_to_json,
    load_decisions,
    parse_decisions,
)


def training() -> tuple[np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(7)
    good = rng.normal(0.8, 0.1, size=(200, 1))
    conflict = rng.integers(0, 2, size=(200, 1)).astype(float)
    x = np.hstack([good, conflict])
    y = ((x[:, 0] > 0.75) & (x[:, 1] == 0)).astype(float)
    groups = ["a"] * 100 + ["b"] * 100
    return x, y, groups


def test_more_of_an_up_feature_never_lowers_the_probability() -> None:
    x, y, groups = training()
    scorer = fit_scorer(x, y, groups, ("similarity", "conflict"), ("similarity",))
    grid = np.linspace(0.0, 1.2, 50)
    p = scorer.probabilities(np.column_stack([grid, np.zeros_like(grid)]))
    assert np.all(np.diff(p) >= -1e-12)
    with_conflict = scorer.probabilities(np.column_stack([grid, np.ones_like(grid)]))
    assert np.all(with_conflict <= p + 1e-12)
    assert scorer.probability([0.95, 0.0]) > 0.8 > scorer.probability([0.95, 1.0])


def test_a_scorer_round_trips_through_its_data_file(tmp_path: Path) -> None:
    x, y, groups = training()
    scorer = fit_scorer(x, y, groups, ("similarity", "conflict"), ("similarity",))
    decision = Decision(scorer, (OperatingPoint(0.01, 0.9, 1.2), OperatingPoint(0.05, 0.7, None)))
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps({"version": 1, "faq": decision_to_json(decision)}))
    read = load_decisions(path).faq
    assert read is not None
    assert read.scorer.probability([0.9, 0.0]) == pytest.approx(scorer.probability([0.9, 0.0]))
    # the most permissive point fitted for a risk no higher than the one asked
    assert read.point(0.02).risk == 0.01
    assert read.point(0.5).risk == 0.05
    assert read.point(0.001).risk == 0.01  # below every point: the strictest


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"version": 2}, "version"),
        ({"version": 1, "faq": {"scorer": {}, "points": []}}, "no operating points"),
        (
            {"version": 1, "faq": {"scorer": {}, "points": [{"risk": 1.5, "threshold": 0.5}]}},
            "out of range",
        ),
        (
            {
                "version": 1,
                "faq": {"scorer": {"features": ["a"]}, "points": [{"risk": 0.1, "threshold": 0.5}]},
            },
            "scorer",
        ),
    ],
)
def test_a_broken_decisions_file_is_refused_with_its_reason(
    data: dict[str, object], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_decisions(data)


def test_the_bundled_file_holds_a_faq_scorer_over_tier_1s_features() -> None:
    from retrieval.faq.features import FEATURES

    decisions = load_decisions()
    assert decisions.faq is not None
    assert decisions.faq.scorer.features == FEATURES
    assert decisions.about.get("faq_left_out"), "the left-out figures travel with the scorer"


def test_weights_of_a_mismatched_scorer_are_refused() -> None:
    with pytest.raises(ConfigError):
        MonotoneScorer(("a",), frozenset({"a"}), {"a": (0.5,)}, (1.0,), (1.0,), 0.0)
