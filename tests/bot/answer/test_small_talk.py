"""Small talk without an LLM (answer.small_talk, 3/6): greetings, thanks, goodbyes and requests for
a person get a polite reply instead of the apology; anything with a question goes to search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.answer.answerer import Answerer
from bot.answer.small_talk import small_talk
from retrieval.text.language import detect_language

# Phrases written for this test (tests/data/small_talk.jsonl): greetings, thanks, goodbyes and
# requests for a person in Vietnamese with and without diacritics, chat shorthand and English,
# and questions that only look like them ("kind": null).
SMALL_TALK = [
    json.loads(line)
    for line in (Path(__file__).parents[2] / "data" / "small_talk.jsonl")
    .read_text("utf-8")
    .splitlines()
    if line.strip()
]


@pytest.mark.parametrize("row", SMALL_TALK, ids=lambda r: r["text"])
def test_every_written_phrase_is_read_as_its_kind(row: dict[str, str | None]) -> None:
    assert small_talk(str(row["text"])) == row["kind"]


async def test_small_talk_is_answered_in_the_language_it_is_written_in(answerer: Answerer) -> None:
    english = [r for r in SMALL_TALK if r["kind"] and detect_language(r["text"]) == "en"]
    assert len(english) >= 10
    for row in english:
        result = await answerer.answer(row["text"])
        assert result.language == "en", row
        assert "Xin lỗi" not in result.answer
        assert "Sorry" not in result.answer


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("xin chào", "greeting"),
        ("Chào ad ạ", "greeting"),
        ("hi", "greeting"),
        ("cảm ơn ạ", "thanks"),
        ("ok cảm ơn nhiều nhé", "thanks"),
        ("Thank you so much", "thanks"),
        ("tạm biệt ad", "goodbye"),
        ("e muốn nói chuyện với người thật được ko ạ", "human"),
        ("cho em gặp cán bộ tư vấn", "human"),
        ("I want to talk to a human", "human"),
        # questions, even with a greeting or staff named in them
        ("chào ad, học phí bao nhiêu?", None),
        ("cán bộ tư vấn trả lời khi nào", None),
        ("số điện thoại cán bộ tuyển sinh là gì", None),
        ("cho em xin số điện thoại của cán bộ tuyển sinh", None),
        ("ok", None),
        # staff named in a question about them ("chất lượng" folds to "chat luong")
        ("Cán bộ coi thi có phải kiểm tra chất lượng đề không?", None),
    ],
)
def test_small_talk_is_read_and_questions_are_not(text: str, kind: str | None) -> None:
    assert small_talk(text) == kind


async def test_a_greeting_and_thanks_get_a_reply_not_the_apology(answerer: Answerer) -> None:
    hello = await answerer.answer("xin chào")
    assert hello.reason == "no search needed: greeting (small talk)"
    assert "Xin lỗi" not in hello.answer
    assert "028 3999 1234" not in hello.answer  # short: an invitation, no contacts dump
    assert "câu hỏi" in hello.answer
    assert len(hello.answer) < 200
    thanks = await answerer.answer("cảm ơn ạ")
    assert thanks.answer.startswith("Không có gì")
    assert thanks.citations == []


async def test_a_request_for_a_person_gets_the_office_s_contact(answerer: Answerer) -> None:
    result = await answerer.answer("e muốn nói chuyện với người thật được ko ạ")
    assert result.reason == "no search needed: human (small talk)"
    assert "cán bộ tư vấn" in result.answer
    assert "028 3999 1234" in result.answer
    assert "giờ hành chính" in result.answer  # when staff usually answer
    english = await answerer.answer("Can I talk to a human please?")
    assert "admissions officer" in english.answer


async def test_a_greeting_with_a_question_is_answered(answerer: Answerer) -> None:
    result = await answerer.answer("chào ad, hotline tuyển sinh là số nào ạ?")
    assert result.tier in {"faq", "documents"}
    assert "028 3999 1234" in result.answer
