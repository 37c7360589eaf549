"""A figure asked per semester or per month ("hp 1 kỳ bn") is answered only by a unit that names
the period, itself or by its table column; a yearly fee is no answer to it (1/4)."""

from __future__ import annotations

import pytest

from bot.answer.answerer import Answerer
from bot.answer.read import read_message
from bot.answer.reading import names_period, periods_asked
from bot.answer.replies import answer_body


@pytest.mark.parametrize(
    ("question", "periods"),
    [
        ("hp nganh nay 1 ky bn a", {"semester"}),
        ("học phí mỗi học kỳ là bao nhiêu", {"semester"}),
        ("1 hk dong bn tien", {"semester"}),
        ("ktx phòng 4 người 1 tháng bao nhiêu", {"month"}),
        ("How much is the tuition per semester?", {"semester"}),
        # a year is named by every fee's unit: no period asked
        ("hp 1 năm bn", set()),
        # folded, "ky" is also "kỹ", "ký": "một kỹ năng", "1 kỳ thi" ask no period
        ("Giao tiếp có phải một kỹ năng được kiểm tra không", set()),
        ("mot ky thi gom may mon", set()),
        ("tháng mấy có kết quả", set()),
    ],
)
def test_the_period_a_figure_is_asked_per(question: str, periods: set[str]) -> None:
    assert periods_asked(question) == periods


@pytest.mark.parametrize(
    ("text", "periods", "named"),
    [
        ("Học phí mỗi học kỳ (tham khảo)", {"semester"}, True),
        ("hoc phi moi hoc ky", {"semester"}, True),
        # folded "đăng ký" is "dang ky": no semester
        ("36.000.000 đồng/năm, đăng ký trực tuyến", {"semester"}, False),
        ("550.000 đồng/người/tháng", {"month"}, True),
        ("550.000 đồng/người/tháng", {"semester"}, False),
    ],
)
def test_a_unit_names_the_period_in_its_own_words(
    text: str, periods: set[str], named: bool
) -> None:
    assert names_period(frozenset(periods), text) is named


async def test_a_yearly_fee_is_no_answer_to_a_fee_per_semester(answerer: Answerer) -> None:
    answer = await answerer.answer(read_message("hp nganh tri tue nhan tao 1 ky bn a"))
    body = answer_body(answer)
    # the FAQ's "36.000.000 đồng/năm" is no answer; the semester's fee is, first in its row
    assert "36.000.000 đồng/năm" not in body
    assert answer.tier == "fallback" or "học kỳ (tham khảo) là 18.000.000" in body
    yearly = await answerer.answer(read_message("hp nganh tri tue nhan tao 1 nam bn a"))
    assert "36.000.000" in answer_body(yearly)
