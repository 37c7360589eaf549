"""A PDF's pages as their author wrote them (retrieval.loading.pdf with page_furniture and
text.wrapping): running headers and page numbers dropped, lines the layout broke joined.
PDFs are made with PyMuPDF."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.loading import load_file
from retrieval.loading.page_furniture import drop_running_lines, strip_page_numbers
from tests.retrieval._support import write_pdf

HEADER = "<p>Tài liệu hướng dẫn sử dụng</p>"


def test_running_headers_and_page_numbers_are_dropped_and_listed(tmp_path: Path) -> None:
    steps = ["đăng nhập cổng xét tuyển", "thêm nguyện vọng", "nộp lệ phí trực tuyến"]
    pages = [f"{HEADER}<p>Bước {n}: {step}.</p><p>{n}/3</p>" for n, step in enumerate(steps, 1)]
    doc = load_file(write_pdf(tmp_path / "hdsd.pdf", pages))

    assert [s.text for s in doc.sections] == [
        "Bước 1: đăng nhập cổng xét tuyển.",
        "Bước 2: thêm nguyện vọng.",
        "Bước 3: nộp lệ phí trực tuyến.",
    ]
    assert doc.meta["running_lines"] == ["Tài liệu hướng dẫn sử dụng"]


def test_lines_broken_by_the_layout_are_joined_and_amounts_closed_up(tmp_path: Path) -> None:
    page = (
        "<p>THÔNG BÁO</p><p>Học viện thông báo về việc bố trí sinh viên khóa 2025 ở<br>"
        "nội trú tại các ký túc xá.</p><p>- Mức thu: 1.800.<br>000 đồng/sinh viên/tháng.</p>"
        "<p>- Số chỗ ở: 40 chỗ.</p>"
    )
    doc = load_file(write_pdf(tmp_path / "ktx.pdf", [page]))

    assert doc.sections[0].text.split("\n") == [
        "THÔNG BÁO",
        "Học viện thông báo về việc bố trí sinh viên khóa 2025 ở nội trú tại các ký túc xá.",
        "- Mức thu: 1.800.000 đồng/sinh viên/tháng.",
        "- Số chỗ ở: 40 chỗ.",
    ]


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        (["3", "Nội dung trang.", "- 4 -"], ["Nội dung trang."]),
        (["Trang 3/10", "", "Nội dung trang.", "Page 3 of 10"], ["", "Nội dung trang."]),
        # a number inside the page is a value, not its number
        (["Chỉ tiêu", "300", "Nội dung trang."], ["Chỉ tiêu", "300", "Nội dung trang."]),
    ],
)
def test_a_page_number_is_dropped_only_first_or_last_on_its_page(
    lines: list[str], kept: list[str]
) -> None:
    assert strip_page_numbers(lines) == kept


def test_a_line_on_too_few_pages_is_no_running_line() -> None:
    pages = ["Bước 1: đăng nhập.\nNội dung A.", "Bước 1: đăng nhập.\nNội dung B.", "Nội dung C."]
    assert drop_running_lines(pages) == (pages, [])
