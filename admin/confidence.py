"""The scorer's confidence stored with a bot reply, and the staff's line below which an answer
is "unsure".

``details["confidence"]`` is the probability that the answer is right, for answers from the FAQ
or the documents; fallbacks, small talk, staff replies and every reply stored before the scorers
have none, and a reply without one is "not known", never unsure. A value that is no number in
[0, 1] counts as none (a page never fails on it). SQL (``confidence_sql``, for the queue and the
dashboard) and Python (``confidence_of``, for a page's rows) read it alike.

``TUVAN_ADMIN__REVIEW_BELOW`` (bot.core.settings.AdminSettings.review_below) is the line: an
answer below it is unsure; 0 turns the signal off.

Staff read the confidence in words (``sureness``): "Chắc chắn", "Khá chắc", "Không chắc"; the
figure itself stays under "Chi tiết kỹ thuật".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from admin.i18n import Translator, add_strings
from bot.core.settings import AdminSettings

# The tiers whose answers carry a confidence.
SCORED_TIERS = ("faq", "documents")
# The line by default, for callers without the settings at hand (benchmarks, tests).
REVIEW_BELOW: float = AdminSettings.model_fields["review_below"].default
# The words' bands. The confidence is calibrated, so "Chắc chắn" means right nine times in ten
# or more; an answer more likely wrong than right is "Không chắc" even when the review line is
# lower or off (the line decides what "Cần xem lại" lists, not what the words may claim).
SURE_FROM = 0.9
UNSURE_BELOW_AT_LEAST = 0.5

add_strings(
    {
        "confidence.unsure": (
            "tuvan không chắc câu trả lời này (độ tin cậy {pct}%, dưới mức {below}%).",
            "tuvan was unsure of this answer (confidence {pct}%, below {below}%).",
        ),
        "confidence.figure": ("Độ tin cậy", "Confidence"),
        "confidence.figure_value": (
            "{pct}% (xác suất câu trả lời đúng)",
            "{pct}% (the chance the answer is right)",
        ),
        "confidence.label": ("Mức chắc chắn", "How sure"),
        "confidence.sure": ("Chắc chắn", "Sure"),
        "confidence.fairly": ("Khá chắc", "Fairly sure"),
        "confidence.unsure_word": ("Không chắc", "Not sure"),
    }
)


def confidence_sql(alias: str) -> str:
    """The reply ``alias``'s confidence as an SQL expression (NULL when it has none). Rounded in
    ``numeric`` first, so that no JSON number, however large or small, fails the cast; each CASE
    branch is evaluated only when reached."""
    value = f"round(({alias}.details -> 'confidence')::numeric, 6)"
    return (
        f"CASE WHEN jsonb_typeof({alias}.details -> 'confidence') = 'number' "
        f"THEN CASE WHEN {value} BETWEEN 0 AND 1 THEN {value}::float8 END END"
    )


def confidence_of(details: Mapping[str, Any]) -> float | None:
    """``details["confidence"]`` when it is a number in [0, 1], else None."""
    value = details.get("confidence")
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def is_unsure(tier: str | None, confidence: float | None, review_below: float) -> bool:
    """Whether staff should look at this answer again for its confidence alone."""
    return tier in SCORED_TIERS and confidence is not None and confidence < review_below


def percent(value: float) -> int:
    """A probability as a whole percentage, rounded down: 0.799 is 79%, never shown as the 80%
    it is below."""
    return math.floor(round(value * 100, 6))


def unsure_sentence(t: Translator, confidence: float, review_below: float) -> str:
    """Why an unsure answer is in "Cần xem lại" (the line as set: 0.755 is 75.5%)."""
    below = f"{round(review_below * 100, 4):g}"
    return t("confidence.unsure", pct=percent(confidence), below=below)


def sureness(confidence: float, review_below: float) -> str:
    """How sure tuvan was, as the key of its words: "confidence.sure" from ``SURE_FROM`` (or
    from the review line, when that is higher), "confidence.unsure_word" below the review line
    (what "Cần xem lại" calls unsure) or below an even chance, "confidence.fairly" between."""
    if confidence < max(review_below, UNSURE_BELOW_AT_LEAST):
        return "confidence.unsure_word"
    if confidence >= max(review_below, SURE_FROM):
        return "confidence.sure"
    return "confidence.fairly"
