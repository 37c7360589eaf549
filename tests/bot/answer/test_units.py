"""The units a passage is quoted by (bot.answer.units), from a table of cases
(units_cases.yaml): numbers whole, a page's furniture never a unit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.answer.units import passage_units, sentences

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).with_name("units_cases.yaml")).read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_passage_is_cut_into_the_units_it_may_be_quoted_by(case: dict[str, Any]) -> None:
    assert sentences(case["text"]) == case["units"]


def test_a_letterhead_does_not_label_the_line_under_it() -> None:
    units = passage_units("CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM\nHọc phí năm 2025 là 30 triệu.")
    assert [(u.text, u.label) for u in units] == [("Học phí năm 2025 là 30 triệu.", None)]


def test_each_numbered_list_is_one_run_of_steps_with_the_page_s_marks() -> None:
    units = passage_units(
        "Các bước:\n1. Đăng nhập. Chọn hồ sơ.\n\n2. Nộp lệ phí.\na) Chuyển khoản;\n"
        "Ghi chú cuối.\n1) Bước khác."
    )
    assert [(u.text, u.step, u.mark) for u in units] == [
        ("Các bước:", 0, ""),
        ("Đăng nhập.", 1, "1."),
        ("Chọn hồ sơ.", 1, ""),
        ("Nộp lệ phí.", 1, "2."),
        ("Chuyển khoản;", 1, "a)"),
        ("Ghi chú cuối.", 0, ""),
        ("Bước khác.", 2, "1)"),
    ]
