"""Exact answers from the facts tables of the demo knowledge base (bot.answer.facts), through
the whole answerer in a real PostgreSQL, as written and without diacritics."""

from __future__ import annotations

import pytest

from bot.answer.answerer import Answerer
from bot.answer.replies import Answer
from retrieval.text.folding import fold


def _facts(answer: Answer) -> str:
    assert answer.tier == "documents", answer.answer
    assert "facts" in answer.why, answer.reason
    return str(answer.why["facts"])


@pytest.mark.parametrize("folded", [False, True])
async def test_a_score_check_states_the_cutoff_its_year_and_the_comparison(
    answerer: Answerer, folded: bool
) -> None:
    question = "em được 25,5 điểm thi THPT có đỗ ngành Khoa học Dữ liệu không ad"
    result = await answerer.answer(fold(question) if folded else question)
    assert _facts(result) == "score check"
    line = next(x for x in result.answer.splitlines() if "Khoa học Dữ liệu" in x)
    assert "25,95" in line and "thấp hơn 0,45 điểm" in line
    assert "năm 2025" in result.answer
    assert result.citations[0].title == "Điểm chuẩn năm 2025"
    assert "có thể khác" in result.answer  # later years are not known yet


async def test_a_score_check_lists_every_programme_the_question_leaves_open(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("25 diem thpt co do khmt k")
    assert _facts(result) == "score check"
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert len(lines) == 2
    assert "26,85" in lines[0] and "thấp hơn 1,85" in lines[0]
    assert "chất lượng cao" in lines[1] and "24,90" in lines[1] and "cao hơn 0,1" in lines[1]


async def test_a_thousands_scale_score_is_checked_against_that_method_only(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("dgnl 900 co do cntt ko")
    assert _facts(result) == "score check"
    assert "880" in result.answer and "cao hơn 20 điểm" in result.answer
    assert "25,90" not in result.answer  # the THPT cut-off is another scale


async def test_a_score_with_no_major_gets_no_verdict(answerer: Answerer) -> None:
    result = await answerer.answer("em được 25 điểm thì có đỗ không ạ")
    assert "facts" not in result.why
    assert "cao hơn" not in result.answer and "thấp hơn" not in result.answer


async def test_a_dash_in_the_table_answers_no(answerer: Answerer) -> None:
    result = await answerer.answer("nganh ttnt co xet hoc ba khong")
    assert _facts(result) == "whether"
    assert result.answer.startswith("Không, ngành Trí tuệ Nhân tạo không xét học bạ (năm 2025)")


async def test_a_combination_the_major_does_not_take_is_a_no_with_the_ones_it_does(
    answerer: Answerer,
) -> None:
    result = await answerer.answer("Ngành Khoa học Dữ liệu có xét tổ hợp D01 không ạ?")
    assert _facts(result) == "whether"
    assert result.answer.startswith("Không, ngành Khoa học Dữ liệu không xét D01 (năm 2026)")
    assert "A00, A01, D07, D08" in result.answer


@pytest.mark.parametrize("folded", [False, True])
async def test_a_major_the_school_does_not_have_is_a_plain_no(
    answerer: Answerer, folded: bool
) -> None:
    question = "trường mình có ngành Kiến trúc không ạ"
    result = await answerer.answer(fold(question) if folded else question)
    assert _facts(result) == "no such major"
    named = "kien truc" if folded else "Kiến trúc"  # as the student wrote it
    assert f"chưa đào tạo ngành {named}." in result.answer
    assert "Có," not in result.answer


async def test_a_major_the_school_has_is_a_yes_with_its_code(answerer: Answerer) -> None:
    result = await answerer.answer("truong co nganh an toan thong tin ko")
    assert _facts(result) == "has major"
    assert result.answer.startswith("Có, trường đào tạo ngành An toàn Thông tin (mã 7480202)")


async def test_an_faq_entry_staff_wrote_about_the_value_is_quoted_before_the_table(
    answerer: Answerer,
) -> None:
    # Tier 1 weighed the Khoa học Máy tính quota entry and was not sure enough to answer
    # verbatim; tier 2 quotes it first, and the table does not take its place.
    result = await answerer.answer("chi tieu nganh khmt nam 2026 bao nhieu")
    assert "facts" not in result.why
    assert result.why["documents"]["faq_passage"] is not None


async def test_which_majors_take_a_combination(answerer: Answerer) -> None:
    result = await answerer.answer("những ngành nào xét tổ hợp D08")
    assert _facts(result) == "majors by combination"
    assert result.answer.startswith("Các ngành xét tổ hợp D08: Khoa học Dữ liệu (2026) [1].")


async def test_the_lowest_cutoff_is_given_for_each_method(answerer: Answerer) -> None:
    result = await answerer.answer("nganh nao diem chuan thap nhat")
    assert _facts(result) == "extreme"
    lines = [x for x in result.answer.splitlines() if x.startswith("- ")]
    assert lines == [
        "- Ngành Công nghệ Thông tin, chương trình chất lượng cao, "
        "phương thức thi tốt nghiệp THPT: 23,80 [1]",
        "- Ngành Công nghệ Thông tin, chương trình chất lượng cao, "
        "phương thức đánh giá năng lực: 800 [1]",
        "- Ngành Công nghệ Thông tin, chương trình chất lượng cao, phương thức học bạ: 26,10 [1]",
    ]


async def test_two_majors_are_compared_row_by_row(answerer: Answerer) -> None:
    result = await answerer.answer("cntt va khmt nganh nao chi tieu nhieu hon")
    assert _facts(result) == "comparison"
    first = next(x for x in result.answer.splitlines() if x.startswith("- 2026"))
    assert first == (
        "- 2026: Công nghệ Thông tin 300 [1], Khoa học Máy tính 240 [1]: Công nghệ Thông tin nhiều hơn."
    )
