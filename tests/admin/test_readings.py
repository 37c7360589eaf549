"""How a message was read, said in the staff's words (admin.readings), and the confidence read
from a reply (admin.confidence): one row per case; adding a case means adding a row."""

from __future__ import annotations

from typing import Any

import pytest

from admin.confidence import confidence_of, is_unsure, percent, unsure_sentence
from admin.i18n import Translator
from admin.readings import Reading, Taken, parse_reading, sentences

VI = Translator("vi")
EN = Translator("en")

MAJOR = {
    "slot": "major",
    "label": "ngành",
    "words": "khmt",
    "from_text": "chỉ tiêu ngành khmt năm nay bn",
}
ATTRIBUTE = {
    "slot": "attribute",
    "label": "điều được hỏi",
    "words": "chỉ tiêu",
    "from_text": "chỉ tiêu ngành cntt năm nay bn",
}


def context(why: str | None, *taken: Any, asked: str = "") -> dict[str, Any]:
    return {"mode": "context", "asked": asked, "taken": list(taken), "why": why, "stopped": None}


# (stored reading, what the student wrote, the sentences shown)
CASES: list[tuple[Any, str | None, list[str]]] = [
    (
        {"mode": "alone", "asked": "học phí ngành khmt", "taken": [], "why": None},
        "học phí ngành khmt",
        ["Đọc riêng tin nhắn này."],
    ),
    (
        {"mode": "alone", "asked": "học phí bao nhiêu", "stopped": "pause"},
        "học phí bao nhiêu",
        ["Đọc riêng tin nhắn này.", "Không dùng câu hỏi trước: đã cách quá lâu."],
    ),
    (
        {"mode": "alone", "asked": "học phí bao nhiêu", "stopped": "small_talk"},
        "học phí bao nhiêu",
        [
            "Đọc riêng tin nhắn này.",
            "Không dùng câu hỏi trước: tin nhắn trước đó là lời chào, cảm ơn hay tạm biệt.",
        ],
    ),
    (
        {"mode": "alone", "asked": "trường có hồ bơi không", "stopped": "answered_alone"},
        "trường có hồ bơi không",
        [
            "Đọc riêng tin nhắn này.",
            "Không dùng câu hỏi trước: đọc riêng, tin nhắn này đã có câu trả lời.",
        ],
    ),
    (
        {"mode": "alone", "asked": "ký túc xá ở đâu", "stopped": "new_topic"},
        "ký túc xá ở đâu",
        [
            "Đọc riêng tin nhắn này.",
            "Không dùng câu hỏi trước: tin nhắn này hỏi sang chuyện khác.",
        ],
    ),
    (
        context("no_subject", MAJOR, asked="học phí bao nhiêu ngành khmt"),
        "học phí bao nhiêu",
        [
            "Tin nhắn không nói ngành nên lấy ngành “khmt” từ câu hỏi trước: "
            "“chỉ tiêu ngành khmt năm nay bn”.",
            "Câu được trả lời: “học phí bao nhiêu ngành khmt”.",
        ],
    ),
    (
        context("no_attribute", ATTRIBUTE, asked="chỉ tiêu ngành khmt năm nay bn"),
        "còn khmt thì sao",
        [
            "Tin nhắn không tự hỏi điều gì nên lấy điều được hỏi “chỉ tiêu” từ câu hỏi trước: "
            "“chỉ tiêu ngành cntt năm nay bn”.",
            "Câu được trả lời: “chỉ tiêu ngành khmt năm nay bn”.",
        ],
    ),
    (
        context("reference", MAJOR, asked="ngành khmt học phí bao nhiêu"),
        "ngành đó học phí bao nhiêu",
        [
            "Tin nhắn nhắc tới ngành đã nói trước đó nên lấy ngành “khmt” từ câu hỏi trước: "
            "“chỉ tiêu ngành khmt năm nay bn”.",
            "Câu được trả lời: “ngành khmt học phí bao nhiêu”.",
        ],
    ),
    (
        context("follow_up", MAJOR, {**MAJOR, "slot": "year", "label": "năm", "words": "2025"}),
        "thế còn điểm chuẩn?",
        [
            "Tin nhắn hỏi tiếp câu trước nên lấy ngành “khmt” từ câu hỏi trước: "
            "“chỉ tiêu ngành khmt năm nay bn”.",
            "Tin nhắn hỏi tiếp câu trước nên lấy năm “2025” từ câu hỏi trước: "
            "“chỉ tiêu ngành khmt năm nay bn”.",
        ],
    ),
    # Without a known "why", without a label or the question it came from: still a sentence.
    (
        context(None, {"slot": "major", "words": "khmt"}),
        None,
        ["Lấy thông tin “khmt” từ câu hỏi trước."],
    ),
    # Read with context, nothing listed as taken: what was answered.
    (
        context("follow_up", asked="điểm chuẩn ngành khmt 2025"),
        None,
        [
            "Tin nhắn được đọc cùng câu hỏi trước.",
            "Câu được trả lời: “điểm chuẩn ngành khmt 2025”.",
        ],
    ),
    # Unknown values and malformed parts are left out, never a failure.
    (
        {"mode": "alone", "asked": 3, "stopped": "reboot", "taken": "x"},
        None,
        ["Đọc riêng tin nhắn này."],
    ),
    (
        context("because", "not a dict", {"words": ""}, {**MAJOR, "label": 7}, asked="ok"),
        "ok",
        ["Lấy thông tin “khmt” từ câu hỏi trước: “chỉ tiêu ngành khmt năm nay bn”."],
    ),
    # The words of the question that said each value, when stored (1/4); malformed ones left out.
    (
        {
            "mode": "alone",
            "asked": "hp nganh cntt bn v ad",
            "said": [
                {"slot": "attribute", "label": "điều được hỏi", "value": "học phí", "words": "hp"},
                {
                    "slot": "major",
                    "label": "ngành",
                    "value": "Công nghệ thông tin",
                    "words": "cntt",
                },
                {"slot": "year", "label": "năm", "value": "2025", "words": "2025"},
                {"slot": "major", "value": "", "words": "x"},
                "not a dict",
            ],
        },
        "hp nganh cntt bn v ad",
        [
            "Đọc riêng tin nhắn này.",
            "Câu hỏi nêu: điều được hỏi “hp” (học phí), ngành “cntt” (Công nghệ thông tin), "
            "năm “2025”.",
        ],
    ),
    # No reading stored (older replies), or not one: nothing is said.
    (None, "học phí", []),
    ({"mode": "guess", "asked": "x"}, "x", []),
    ("context", "x", []),
    ([MAJOR], "x", []),
]


@pytest.mark.parametrize(("stored", "message", "said"), CASES)
def test_a_reading_is_said_in_vietnamese(stored: Any, message: str | None, said: list[str]) -> None:
    assert sentences(VI, parse_reading(stored), message) == said


def test_the_parsed_reading_keeps_what_was_taken() -> None:
    assert parse_reading(context("no_subject", MAJOR, asked="q")) == Reading(
        "context",
        "q",
        (Taken("major", "ngành", "khmt", "chỉ tiêu ngành khmt năm nay bn"),),
        "no_subject",
        None,
    )


def test_try_it_says_question_and_english_has_its_own_words() -> None:
    alone = parse_reading({"mode": "alone", "asked": "x"})
    assert sentences(VI, alone, alone="reading.try_alone") == ["Đọc riêng câu hỏi này."]
    [english] = sentences(EN, parse_reading(context("no_subject", MAJOR, asked="q")), "q")
    assert english == (
        "The message names no ngành, so ngành “khmt” was taken from an earlier question: "
        "“chỉ tiêu ngành khmt năm nay bn”."
    )


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        (0.62, 0.62),
        (0, 0.0),
        (1, 1.0),
        (None, None),
        ("0.3", None),
        (True, None),
        (1.2, None),
        (-0.1, None),
        (float("nan"), None),
        ([0.3], None),
    ],
)
def test_the_confidence_is_a_number_in_0_1_or_none(stored: Any, read: float | None) -> None:
    assert confidence_of({"confidence": stored}) == read
    assert confidence_of({}) is None


def test_who_is_unsure_and_how_it_is_said() -> None:
    assert is_unsure("documents", 0.62, 0.8)
    assert is_unsure("faq", 0.79, 0.8)
    assert not is_unsure("documents", 0.8, 0.8)
    assert not is_unsure("documents", None, 0.8)  # not known is not unsure
    assert not is_unsure("fallback", 0.1, 0.8)
    assert not is_unsure("documents", 0.0, 0.0)  # 0: off
    assert [percent(v) for v in (0.57, 0.62, 0.799, 1.0)] == [57, 62, 79, 100]
    assert unsure_sentence(VI, 0.62, 0.8) == (
        "tuvan không chắc câu trả lời này (độ tin cậy 62%, dưới mức 80%)."
    )
    assert "dưới mức 75.5%" in unsure_sentence(VI, 0.75, 0.755)
