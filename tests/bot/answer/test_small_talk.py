"""Small talk without an LLM (answer.small_talk, 3/6): greetings, thanks, goodbyes, openers and
requests for a person get a polite reply instead of the apology; anything with a question goes to
search, an opener in front of it taken off (4/4)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bot.answer.answerer import Answerer
from bot.answer.read import read_message
from bot.answer.small_talk import small_talk
from bot.knowledge.demo import demo_kb_dir
from retrieval.text.language import detect_language

DATA = Path(__file__).parents[2] / "data"
# Phrases written for this test (tests/data/small_talk.jsonl): greetings, thanks, goodbyes,
# openers and requests for a person in Vietnamese with and without diacritics, chat shorthand and
# English, and questions that only look like them ("kind": null).
SMALL_TALK = [
    json.loads(line)
    for line in (DATA / "small_talk.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
# What opens a conversation and asks nothing yet: a greeting, a call, a leave to ask.
OPENERS = ("greeting", "opener")


def _questions(path: Path) -> list[str]:
    """The questions of a JSONL file of questions or FAQ entries, with an entry's variants."""
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [asked for row in rows for asked in [row["question"], *row.get("variants", [])]]


# Real questions: the demo dialogues', the demo's evaluation questions, its FAQ's with variants.
REAL_QUESTIONS = [
    *_questions(DATA / "demo_dialogues.jsonl"),
    *_questions(demo_kb_dir() / "questions.jsonl"),
    *_questions(demo_kb_dir() / "faq.jsonl"),
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


def test_the_table_holds_openers_in_every_way_students_write_them() -> None:
    openers = [r for r in SMALL_TALK if r["kind"] == "opener"]
    with_marks = [r for r in openers if r["language"] == "vi" and not r["text"].isascii()]
    without = [r for r in openers if r["language"] == "vi" and r["text"].isascii()]
    english = [r for r in openers if r["language"] == "en"]
    assert min(len(with_marks), len(without), len(english)) >= 8
    for text in ("ad oi", "ad ơi cho e hỏi", "cho e hoi", "cho mình hỏi chút", "e muốn hỏi ạ"):
        assert any(r["text"] == text for r in openers), text
    for text in ("alo", "hello ad", "em chào ad ạ", "xin chào", "hi", "hello"):
        assert small_talk(text) in OPENERS, text


@pytest.mark.parametrize("question", REAL_QUESTIONS)
def test_no_real_question_is_read_as_small_talk(question: str) -> None:
    assert read_message(question).kind is None


@pytest.mark.parametrize(
    ("message", "question"),
    [
        ("ad oi hp cntt bn", "hp cntt bn"),
        ("cho e hỏi điểm chuẩn khmt", "điểm chuẩn khmt"),
        ("hello, what is the tuition", "what is the tuition"),
        ("Ad ơi, cho em hỏi với ạ, học phí ngành KTPM bao nhiêu?", "học phí ngành KTPM bao nhiêu?"),
        ("dạ em chào thầy cô, cho em hỏi mã trường là gì", "mã trường là gì"),
        ("chào ad, học phí bao nhiêu?", "học phí bao nhiêu?"),
        ("cho em hỏi là trường có ktx không", "trường có ktx không"),
        # a greeting is taken off only where something marks its end
        ("chào mừng tân sinh viên là ngày nào", "chào mừng tân sinh viên là ngày nào"),
        # "cho em xin…" asks for something: no opener
        ("cho em xin email phòng tuyển sinh", "cho em xin email phòng tuyển sinh"),
        ("có ai biết học phí ngành cntt không", "có ai biết học phí ngành cntt không"),
    ],
)
def test_an_opener_in_front_of_a_question_is_taken_off_it(message: str, question: str) -> None:
    read = read_message(message)
    assert (read.kind, read.question) == (None, question)


def test_a_long_run_of_padding_is_read_at_once() -> None:
    # "anh chi" is "anh" and "chi": the patterns could read such a run in 2^n ways.
    started = time.perf_counter()
    assert small_talk("anh chi " * 21 + "xyz") is None
    assert read_message("anh chi " * 21 + "chao, xyz").kind is None
    assert time.perf_counter() - started < 1.0


async def test_an_opener_gets_a_short_invitation_in_its_language(answerer: Answerer) -> None:
    for text in ("ad oi", "cho e hoi", "ad ơi cho e hỏi", "e muốn hỏi ạ"):
        result = await answerer.answer(text)
        assert result.reason == "no search needed: opener (small talk)", text
        assert result.why == {"small_talk": "opener"}
        assert result.answer.startswith("Chào bạn, bạn cứ hỏi nhé")
        assert len(result.answer) < 80
        assert result.citations == []
    english = await answerer.answer("hello, can I ask a question?")
    assert english.language == "en"
    assert english.answer.startswith("Hi! Go ahead and ask")


async def test_a_question_behind_an_opener_is_answered_as_if_asked_alone(
    answerer: Answerer,
) -> None:
    for opened, alone in [
        ("ad oi hp ngành ktpm 1 năm bn", "hp ngành ktpm 1 năm bn"),
        ("cho e hỏi hotline tuyển sinh là số nào ạ", "hotline tuyển sinh là số nào ạ"),
    ]:
        with_opener = await answerer.answer(opened)
        asked_alone = await answerer.answer(alone)
        assert with_opener.tier in {"faq", "documents"}, opened
        assert (with_opener.tier, with_opener.answer) == (asked_alone.tier, asked_alone.answer)
