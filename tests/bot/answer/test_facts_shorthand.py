"""The facts tier reads a question in chat shorthand as the student typed it and as written
out (bot.answer.facts.tier), on the demo knowledge base; what "trường có ngành …" names; and
the years a question compares."""

from __future__ import annotations

import pytest

from bot.answer.answerer import Answerer
from bot.answer.facts.question import offered_name


@pytest.mark.parametrize(
    "question",
    [
        "e dc 25.5 diem khoi a00 thi vo dc attt ko ad",  # "vô dc": "vào được" in shorthand
        "em được 25,5 điểm thì vào được an toàn thông tin không",
        # of two numbers, the score is the one called points
        "tong 3 mon khoi a00 e dc 25,5d thi vo dc attt ko ad",
    ],
)
async def test_a_score_check_is_read_in_chat_shorthand(answerer: Answerer, question: str) -> None:
    result = await answerer.answer(question)
    assert result.tier == "documents", result.answer
    assert result.why.get("facts") == "score check", result.reason
    assert "25,40" in result.answer  # ATTT's 2025 cut-off, standard programme


async def test_a_fee_and_a_deadline_of_a_major_are_no_score_check(answerer: Answerer) -> None:
    # "1" is a number and "attt" is "an toàn thông tin" written out ("an toàn" also asks whether
    # a score is safe): read as typed, nothing here checks a score.
    result = await answerer.answer("hp 1 kì ngành attt bn, hạn nộp hp kì 1 là ngày nào ạ")
    assert result.why.get("facts") != "score check", result.answer
    assert "16.250.000" in result.answer


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("trường có ngành luật không ạ", "luật"),
        ("truong co dao tao nganh marketing khong", "marketing"),
        # a word after "ngành" that names no major: another question, never a plain no
        ("năm sau trường có mở ngành mới không", None),
        ("trường có ngành nào hot không", None),
        ("truong co nganh khac khong", None),
        # a name ends with its clause: "ngành nào, học lịch ntn" names none...
        ("muon hoc vb2 ben mk thi co nganh nao, hoc lich ntn a", None),
        # ...and "ngành dược, học phí bao nhiêu" names dược
        ("trường có ngành dược, học phí bao nhiêu", "dược"),
        ("co nganh y khoa khong, hp bn", "y khoa"),
        # in English, a name the words major, programme or degree go with
        ("Do you offer a nursing degree?", "nursing"),
        ("do you have a major in law", "law"),
        ("Do you have any scholarship for foreign students? My IELTS is 7.5", None),
        ("do you have any program fully taught in english", None),
    ],
)
def test_the_major_a_does_the_school_have_question_names(question: str, name: str | None) -> None:
    assert offered_name(question) == name


async def test_of_two_years_compared_the_one_no_table_holds_is_said_missing(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("điểm chuẩn ngành ktpm năm 2024 so với 2025 tăng hay giảm")
    assert result.why.get("facts") == "điểm chuẩn", result.reason
    assert "2025: 26,10 [1]" in result.answer
    assert "Mình chưa có điểm chuẩn năm 2024." in result.answer
    # a year a table holds for the major is quoted beside the other
    result = await answerer.answer("diem chuan thpt nganh attt nam 2025 so voi 2024 tang hay giam")
    assert "2024: 25,55" in result.answer
    assert "2025: 25,40" in result.answer
    assert "Mình chưa có" not in result.answer
