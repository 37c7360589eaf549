"""Follow-ups without an LLM (bot.answer.followup, 3/6): a marked follow-up takes the previous
question's values, a reference ("ngành đó") is resolved, a short question that leaves out whom
it is about gets the previous names, and one the vocabulary reads nothing in gets the previous
topic; each read on dialogues written for the demo knowledge base and on the UIT set's kind of
questions."""

from __future__ import annotations

import pytest

from bot.answer.followup import carry_over, standalone_question
from bot.answer.parts import AnswererParts


@pytest.mark.parametrize(
    ("previous", "question", "expected"),
    [
        # marked: the value named replaces the previous one of its kind
        (
            ["Học phí ngành Khoa học Máy tính năm 2026 là bao nhiêu?"],
            "còn ngành Công nghệ Thông tin thì sao?",
            "Học phí ngành Công nghệ Thông tin năm 2026 là bao nhiêu?",
        ),
        (["diem chuan khmt 2025"], "còn xét dgnl thì lấy bn", "diem chuan khmt 2025 dgnl"),
        # a reference
        (
            ["ngành kỹ thuật phần mềm xét tổ hợp nào"],
            "ngành đó học phí bao nhiêu",
            "ngành kỹ thuật phần mềm học phí bao nhiêu",
        ),
        # whom it is about, from the turn that named it (not the year)
        (
            ["ngành khoa học dữ liệu xét tổ hợp nào ạ", "chỉ tiêu năm nay bn"],
            "thế điểm chuẩn 2025 xét thpt là bn ad",
            "thế điểm chuẩn 2025 xét thpt là bn ad khoa học dữ liệu",
        ),
        (["Điểm chuẩn ngành KHMT năm 2025?"], "học phí bao nhiêu", "học phí bao nhiêu KHMT"),
        # the topic, less what the previous question asked for ("sđt")
        (
            ["sđt phòng tuyển sinh là gì ạ"],
            "thứ 7 có làm việc ko ạ",
            "phòng tuyển sinh: thứ 7 có làm việc ko ạ",
        ),
    ],
)
def test_a_follow_up_is_made_standalone(
    parts: AnswererParts, previous: list[str], question: str, expected: str
) -> None:
    assert carry_over(question, previous, parts.guard, parts.processor) == expected


@pytest.mark.parametrize(
    ("previous", "question"),
    [
        # long enough to stand alone
        (
            ["điểm chuẩn khmt 2025"],
            "Học phí ngành Kỹ thuật Phần mềm năm học 2026-2027 là bao nhiêu một năm vậy ạ?",
        ),
        # names its own major: nothing to carry
        (["điểm chuẩn khmt 2025"], "học phí ngành attt bao nhiêu"),
        # nothing to carry from
        (["xin chào"], "ngành đó học phí bao nhiêu"),
    ],
)
def test_a_question_that_stands_alone_is_left_as_it_is(
    parts: AnswererParts, previous: list[str], question: str
) -> None:
    assert carry_over(question, previous, parts.guard, parts.processor) is None


async def test_without_an_llm_the_rule_rewrites_and_with_no_history_nothing_changes(
    parts: AnswererParts,
) -> None:
    rewritten = await standalone_question(
        "ngành đó học phí bao nhiêu",
        ["ngành kỹ thuật phần mềm xét tổ hợp nào"],
        parts.guard,
        None,
        parts.processor,
    )
    assert rewritten == "ngành kỹ thuật phần mềm học phí bao nhiêu"
    assert await standalone_question("ngành đó học phí bao nhiêu", [], parts.guard, None) == (
        "ngành đó học phí bao nhiêu"
    )
