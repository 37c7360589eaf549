"""A FAQ's own calibration (1/4): the threshold an operating point gives this FAQ, and the
entry that took other entries' questions needing more."""

from __future__ import annotations

import pytest

from retrieval.decisions.store import OperatingPoint
from retrieval.faq.calibration import Calibration

SCORES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@pytest.mark.parametrize(
    ("level", "floor", "expected"),
    [
        (0.5, 0.0, 0.5),  # the median score
        (1.0, 0.0, 0.9),  # the highest
        (1.5, 0.0, 0.95),  # halfway from the highest to certainty
        (2.0, 0.0, 1.0),
        (0.5, 0.7, 0.7),  # never below the fitted floor
        (None, 0.8, 0.8),  # no level: the floor
    ],
)
def test_an_operating_point_sets_a_threshold_from_this_faqs_scores(
    level: float | None, floor: float, expected: float
) -> None:
    point = OperatingPoint(0.01, floor, level)
    assert Calibration(SCORES).threshold(point) == pytest.approx(expected)


def test_a_faq_too_small_to_calibrate_takes_the_floor() -> None:
    assert Calibration((0.2, 0.9)).threshold(OperatingPoint(0.01, 0.6, 1.0)) == 0.6


def test_an_entry_that_took_another_question_needs_more_than_it_got() -> None:
    calibration = Calibration(SCORES, {7: 0.97})
    point = OperatingPoint(0.01, 0.0, 1.0)
    assert calibration.threshold(point, 7) == pytest.approx(0.97)
    assert calibration.threshold(point, 8) == pytest.approx(0.9)
