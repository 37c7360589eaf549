"""A message read once (bot.answer.read): its language, small talk, the question it asks, and
what the school's vocabulary reads in it, each value with the student's words that said it.
Each row of the table is a message and what its reading must hold."""

from __future__ import annotations

from collections import Counter

import pytest

from bot.answer.answerer import Answerer
from bot.answer.conversation import ConversationAnswerer
from bot.answer.followup import Turn
from bot.answer.parts import AnswererParts
from bot.answer.read import Read, read_message
from bot.answer.replies import Answer
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets
from retrieval.query import prepare_query
from retrieval.text.folding import fold
from retrieval.text.terms import TextProcessor

CASES = [
    # (message, language, small talk, question, {(category, value, words)}, kinds asked)
    (
        "Học phí ngành Công nghệ thông tin năm 2025 là bao nhiêu?",
        "vi",
        None,
        "Học phí ngành Công nghệ thông tin năm 2025 là bao nhiêu?",
        {
            ("attribute", "học phí", "Học phí"),
            ("major", "Công nghệ thông tin", "Công nghệ thông tin"),
            ("year", "2025", "2025"),
        },
        {"money"},  # an amount, not any figure
    ),
    (
        "hoc phi nganh cong nghe thong tin nam 2025 la bao nhieu",
        "vi",
        None,
        "hoc phi nganh cong nghe thong tin nam 2025 la bao nhieu",
        {
            ("attribute", "học phí", "hoc phi"),
            ("major", "Công nghệ thông tin", "cong nghe thong tin"),
            ("year", "2025", "2025"),
        },
        {"money"},  # an amount, not any figure
    ),
    # shorthand: read written out ("hp" is học phí), said in the student's words
    (
        "hp nganh cntt bn v ad",
        "vi",
        None,
        "hp nganh cntt bn v ad",
        {("attribute", "học phí", "hp"), ("major", "Công nghệ thông tin", "cntt")},
        {"money"},  # an amount, not any figure
    ),
    # an opener is no part of the question; a method, a year
    (
        "ad ơi cho em hỏi điểm chuẩn xét học bạ năm 2024",
        "vi",
        None,
        "điểm chuẩn xét học bạ năm 2024",
        {
            ("attribute", "điểm chuẩn", "điểm chuẩn"),
            ("method", "học bạ", "xét học bạ"),
            ("year", "2024", "2024"),
        },
        set(),
    ),
    (
        "hệ vừa làm vừa học học phí bao nhiêu",
        "vi",
        None,
        "hệ vừa làm vừa học học phí bao nhiêu",
        {("programme", "vừa làm vừa học", "vừa làm vừa học"), ("attribute", "học phí", "học phí")},
        {"money"},  # an amount, not any figure
    ),
    (
        "What is the tuition fee for computer science in 2025?",
        "en",
        None,
        "What is the tuition fee for computer science in 2025?",
        {
            ("attribute", "học phí", "tuition fee"),
            ("major", "Khoa học máy tính", "computer science"),
            ("year", "2025", "2025"),
        },
        {"money"},
    ),
    # small talk is read as such, and asks nothing
    ("xin chào ạ", "vi", "greeting", "xin chào ạ", set(), set()),
]


@pytest.mark.parametrize(("message", "language", "kind", "question", "said", "kinds"), CASES)
def test_a_message_is_read_with_the_words_that_said_each_value(
    parts: AnswererParts,
    message: str,
    language: str,
    kind: str | None,
    question: str,
    said: set[tuple[str, str, str]],
    kinds: set[str],
) -> None:
    read = read_message(message)
    assert (read.language, read.kind, read.question) == (language, kind, question)
    read = read.with_restored(prepare_query(read.question, parts.processor), *_vocabulary(parts))
    assert {(s.category, s.value, s.words) for s in read.said} == said
    assert read.asks is not None
    assert read.asks.kinds == kinds
    named: dict[str, set[str]] = {}
    for category, value, _ in said:
        named.setdefault(category, set()).add(value)
    assert {c: set(v) for c, v in read.asks.facets.items() if c in named} == named


def test_a_question_in_parts_holds_each_part_s_reading(parts: AnswererParts) -> None:
    read = read_message("chỉ tiêu ngành khmt bao nhiêu, học phí ra sao?")
    read = read.with_restored(prepare_query(read.question, parts.processor), *_vocabulary(parts))
    assert [p.text for p in read.parts] == ["chỉ tiêu ngành khmt bao nhiêu", "học phí ra sao?"]
    assert [sorted(p.own.attributes) for p in read.parts] == [["chỉ tiêu"], ["học phí"]]
    # the second part asks the fee of the major the first names
    assert read.parts[1].reading.entities == {"major": frozenset({"Khoa học máy tính"})}


def test_a_part_naming_nothing_asks_about_the_part_before_not_what_it_asks(
    parts: AnswererParts,
) -> None:
    # "mấy giờ mở cửa" asks the opening hours of the admissions office, not where it is.
    read = read_message("phong tuyen sinh o dau, may gio mo cua vay ad")
    read = read.with_restored(prepare_query(read.question, parts.processor), *_vocabulary(parts))
    second = read.parts[1].reading
    assert fold(second.text).startswith("phong tuyen sinh: may gio mo cua")
    assert second.kinds == {"time"}  # a time of day: a date is no opening hour


@pytest.mark.parametrize(
    ("message", "second", "takes"),
    [
        # a part that says only when: the deadline of the fee the other part asks
        (
            "Học phí học kỳ 1 ngành Khoa học Dữ liệu là bao nhiêu và hạn chót phải đóng là "
            "ngày nào ạ?",
            1,
            {"học phí"},
        ),
        # ...only where: where the file the other part asks about is handed in
        ("hồ sơ nhập học gồm những gì, nộp ở đâu", 1, {"hồ sơ"}),
        # a part naming an attribute of its own takes none
        ("học phí ngành cntt bao nhiêu, điểm chuẩn năm ngoái là bao nhiêu", 1, set()),
    ],
)
def test_a_part_saying_only_when_or_where_takes_the_other_part_s_attribute(
    parts: AnswererParts, message: str, second: int, takes: set[str]
) -> None:
    read = read_message(message)
    read = read.with_restored(prepare_query(read.question, parts.processor), *_vocabulary(parts))
    part = read.parts[second]
    assert set(part.reading.attributes) - set(part.own.attributes) == takes
    # what the part asks stays its own: a deadline, not the fee's amount
    assert part.own.kinds
    assert part.reading.kinds == part.own.kinds


def _vocabulary(parts: AnswererParts) -> tuple[NearMissGuard, TextProcessor]:
    return parts.guard, parts.processor


# -- read once ------------------------------------------------------------------------------


@pytest.fixture
def facets_read(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[int, str]]:
    """Every time a guard (by its id) is asked what a text names."""
    calls: Counter[tuple[int, str]] = Counter()
    facets = NearMissGuard.facets

    def counted(self: NearMissGuard, text: str) -> Facets:
        calls[(id(self), text)] += 1
        return facets(self, text)

    monkeypatch.setattr(NearMissGuard, "facets", counted)
    return calls


async def test_a_message_is_read_once_and_its_answer_carries_that_reading(
    answerer: Answerer, facets_read: Counter[tuple[int, str]]
) -> None:
    conversation = ConversationAnswerer(answerer, answerer.sessionmaker)
    text = "hp nganh cntt bn v ad"
    reading = await conversation.read_turns(text, [Turn("Điểm chuẩn ngành KHMT năm 2025?")], None)
    assert reading.mode == "alone"
    facets_read.clear()  # the earlier question is read by the step, as it was written
    answer = await conversation.answer_reading(text, reading)

    read = answer.read
    assert isinstance(read, Read)
    assert read.alone is not None
    assert read.question == text
    assert read.dense.startswith("học phí")
    # Neither the message nor its written-out form is read twice by any guard.
    asked = {text, read.dense}
    assert {k: n for k, n in facets_read.items() if k[1] in asked and n > 1} == {}
    # What staff see: the words that said each value.
    assert answer.reading is not None
    said = {(s["slot"], s["words"]) for s in answer.reading["said"]}
    assert {("attribute", "hp"), ("major", "cntt")} <= said


@pytest.mark.parametrize(
    ("answer_text", "about"),
    [
        # one common word of four ("cơ sở") is no sign the answer is about the message
        ("- Khi lên năm 3, sinh viên chuyển về học tại cơ sở chính.", False),
        ("- Thư viện ở cả hai cơ sở: miễn phí cho sinh viên có thẻ.", True),
    ],
)
async def test_a_topic_taken_is_kept_only_when_the_answer_holds_half_the_message_s_words(
    answerer: Answerer, answer_text: str, about: bool
) -> None:
    conversation = ConversationAnswerer(answerer, answerer.sessionmaker)
    text = "thu vien giua 2 co so co mat tien ko"
    reading = await conversation.read_turns(text, [Turn("mấy giờ ktx đóng cổng vậy ad")], None)
    assert reading.mode == "context"  # it names nothing the vocabulary reads: the topic in front
    message = reading.message
    assert message is not None
    assert message.alone is not None
    assert message.alone.own == ("thu", "giua", "so", "mat")
    answer = Answer("documents", answer_text, "vi")
    assert conversation._about_own_words(message, answer) is about
