"""retrieval.text.wrapping: a PDF's lines joined where its layout broke a sentence, from a
table of cases (wrapping_cases.yaml), and amounts whose thousands dot the layout spaced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from retrieval.text.wrapping import close_thousands, join_wrapped, wrap_words

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).with_name("wrapping_cases.yaml")).read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_lines_the_layout_broke_are_joined(case: dict[str, Any]) -> None:
    assert join_wrapped(case["lines"]) == case["joined"]


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ("Lệ phí 60. 000 đ/hồ sơ", "Lệ phí 60.000 đ/hồ sơ"),
        ("Học phí 1. 050. 000 đồng", "Học phí 1.050.000 đồng"),
        ("tối đa 25. 000.000 VNĐ", "tối đa 25.000.000 VNĐ"),
        ("khoảng 3. 100 USD mỗi năm", "khoảng 3.100 USD mỗi năm"),
        # the next sentence opens with a number: not an amount, left as written
        ("năm 2025. 100 thí sinh", "năm 2025. 100 thí sinh"),
        ("Điều 3. 120 chỉ tiêu", "Điều 3. 120 chỉ tiêu"),
        ("điểm 28.5. 100 chỉ tiêu", "điểm 28.5. 100 chỉ tiêu"),
        ("ngày 07/7/2025, điểm 23,47", "ngày 07/7/2025, điểm 23,47"),
    ],
)
def test_an_amount_spaced_at_its_thousands_dot_is_closed_up(text: str, closed: str) -> None:
    assert close_thousands(text) == closed


def test_the_bundled_word_lists_load() -> None:
    words = wrap_words()
    assert {"và", "của", "từ"} <= words.dangling
    assert "dong" in words.currencies  # folded, as amounts are matched
