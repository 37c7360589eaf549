"""How sure tuvan was, in words: the calibrated confidence in three bands, the lower one agreeing
with what "Cần xem lại" calls unsure."""

from __future__ import annotations

import pytest

from admin.confidence import sureness

CASES = [
    # (confidence, review line, words)
    (1.0, 0.8, "confidence.sure"),
    (0.9, 0.8, "confidence.sure"),
    (0.899, 0.8, "confidence.fairly"),
    (0.8, 0.8, "confidence.fairly"),
    (0.799, 0.8, "confidence.unsure_word"),  # unsure in "Cần xem lại" too
    (0.0, 0.8, "confidence.unsure_word"),
    (0.93, 0.95, "confidence.unsure_word"),  # a stricter line: below it is never "sure"
    (0.96, 0.95, "confidence.sure"),
    (0.6, 0.0, "confidence.fairly"),  # the line off: the words still stand
    (0.49, 0.0, "confidence.unsure_word"),  # more likely wrong than right
    (0.49, 0.3, "confidence.unsure_word"),
]


@pytest.mark.parametrize(("confidence", "review_below", "words"), CASES)
def test_the_confidence_in_words(confidence: float, review_below: float, words: str) -> None:
    assert sureness(confidence, review_below) == words
