"""A yes-no question ("ktx có cho nuôi mèo không") asks whether about some words; an answer that
holds none of them (the dorms' capacity) answers something else, and tier 2 abstains (1/4)."""

from __future__ import annotations

import pytest

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.answer.read import read_message
from bot.answer.reading import whether_words
from bot.answer.replies import answer_body
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.vocabulary import load_guard
from retrieval.text.folding import fold
from tests.bot.answer._support import hit, quotes_for


@pytest.fixture(scope="module")
def guard() -> NearMissGuard:
    return load_guard()


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("ktx truong co cho nuoi meo hay cho ko a", ("nuoi meo",)),
        ("trường có hồ bơi không ạ", ("ho boi",)),
        ("o ktx co duoc nau an ko", ("nau an",)),
        # a clause-final "không" closes it; "có … không có" asks no yes-no question
        ("năm 2025 ngành này có tổ hợp nào mà ngành khác không có", ()),
        # words that ask nothing themselves; first, "đóng" and "nộp" pay or hand in what is
        # named ("tiền cọc": the vocabulary's)
        ("hai cách tính có giống nhau không", ()),
        ("Có phải đóng tiền cọc không?", ()),
        ("co phai nop giay kham suc khoe ko", ("giay kham suc khoe",)),
        # what the vocabulary reads is no word of what is asked whether: "học bạ" is a method
        ("ngành ttnt có xét học bạ không", ()),
        # it asks for some ("nào"), not whether
        ("trường có biện pháp nào không", ()),
        # not a yes-no question
        ("học phí ngành cntt bao nhiêu", ()),
    ],
)
def test_what_a_yes_no_question_asks_whether(
    guard: NearMissGuard, question: str, words: tuple[str, ...]
) -> None:
    assert whether_words(question, guard.spans(question)) == words


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        # the dorms' capacity holds neither "nuôi" nor "mèo": no answer beats a wrong one
        ("ktx truong co cho nuoi meo hay cho ko a", None),
        ("Trường có hỗ trợ tìm nhà trọ gần trường cho sinh viên không ở ktx không ạ?", None),
        # the answer says what was asked whether
        ("trường có hồ bơi không ạ", "25 m"),
        ("bang tot nghiep van bang 2 co ghi hinh thuc dao tao ko ad", "không ghi hình thức"),
    ],
)
async def test_an_answer_holding_nothing_asked_whether_is_no_answer(
    answerer: Answerer, question: str, fact: str | None
) -> None:
    answer = await answerer.answer(read_message(question))
    if fact is None:
        assert answer.tier == "fallback"
        assert "no quoted unit holds what is asked" in answer.reason
    else:
        assert answer.tier == "documents"
        assert fact in answer_body(answer)


def test_a_word_of_what_is_asked_whether_is_held_only_as_written(parts: AnswererParts) -> None:
    # Written with its marks, "vận động viên" is not the "10.000.000 đồng" of a scholarship;
    # typed without them, "dong" is either, and the unit is quoted as before.
    unit = hit("Học bổng Vượt khó trị giá 10.000.000 đồng/suất/năm, 150 suất mỗi năm.")
    written = "trường có học bổng riêng cho vận động viên không"
    assert quotes_for(parts, written, unit) == []
    assert quotes_for(parts, fold(written), unit) != []
