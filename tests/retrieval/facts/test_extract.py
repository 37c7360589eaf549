"""Facts and catalogue items read from real files' tables (Markdown, CSV, HTML), as ingest
reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.facts.book import conflicts
from retrieval.facts.cells import read_number
from retrieval.facts.extract import extract_facts
from retrieval.facts.model import COMBINATIONS, CUTOFF, MAJOR, PROGRAMME, QUOTA, Extraction, Fact
from retrieval.facts.names import initials
from retrieval.facts.tables import split_row
from retrieval.guard.vocabulary import load_guard
from retrieval.loading import load_file

CUTOFFS_MD = """# Điểm chuẩn năm 2025

Quy ước:

- **THPT:** điểm thi tốt nghiệp THPT năm 2025, thang 30.
- **ĐGNL:** điểm kỳ thi đánh giá năng lực năm 2025, thang 1.200.
- Dấu "—" nghĩa là ngành không xét tuyển theo phương thức đó.

## Điểm chuẩn 2025 – chương trình chuẩn

| Ngành | Mã ngành | THPT | ĐGNL | Học bạ |
|---|---|---|---|---|
| Khoa học Máy tính (KHMT) | 7480101 | 26,85 | 935 | 28,20 |
| Trí tuệ Nhân tạo | 7480107 | 27,10 | 950 | — |
| Tài chính - Ngân hàng | 7340201 | 24,00 | 31,5 | 26,00 |
| **Tổng** | | | | |

## Điểm chuẩn 2025 – chương trình chất lượng cao

| Chương trình | Mã xét tuyển | THPT | ĐGNL |
|---|---|---|---|
| Khoa học Máy tính – chất lượng cao | 7480101_CLC | 24,90 | 850 |

## So sánh điểm chuẩn THPT 2024 – 2025

| Ngành | Năm 2024 | Năm 2025 | Chênh lệch |
|---|---|---|---|
| Khoa học Máy tính | 26,40 | 26,85 | +0,45 |
"""

CUTOFFS_CSV = """2024,,,,,
STT,Mã ngành,Tên ngành,Tổ hợp môn,Điểm chuẩn,Điểm ĐGNL
1,7480101,Khoa học máy tính,A00; A01; D01; D07,27.3,925
2,7480104_TT,Hệ thống thông tin (CT tiên tiến),A00; D01; D07,25.55,850
3,7480201_CLCN,CÔNG NGHỆ THÔNG TIN (CHẤT LƯỢNG CAO ĐỊNH HƯỚNG NHẬT BẢN),A00;A01,25.85,795
2023,,,,,
STT,Mã ngành,Tên ngành,Tổ hợp môn,Điểm chuẩn,Điểm ĐGNL
1,7480101,Khoa học máy tính,A00;A01;D01;D07,26.9,915
2,75202a1,Thiết kế vi mạch (Hướng vi mạch bán dẫn,A00;A01,26.5,910
"""


def _read(tmp_path: Path, name: str, text: str) -> Extraction:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return extract_facts(load_file(path), load_guard())


def _fact(ex: Extraction, **want: object) -> Fact:
    found = [f for f in ex.facts if all(getattr(f, k) == v for k, v in want.items())]
    assert len(found) == 1, (want, found)
    return found[0]


def test_a_markdown_cutoff_table_gives_each_cell_its_major_method_year_and_scale(
    tmp_path: Path,
) -> None:
    ex = _read(tmp_path, "diem-chuan-2025.md", CUTOFFS_MD)
    thpt = _fact(ex, code="7480101", method="thi tốt nghiệp THPT")
    assert (thpt.major, thpt.programme) == ("Khoa học Máy tính", None)
    assert (thpt.year, thpt.value, thpt.text, thpt.scale) == (2025, 26.85, "26,85", 30.0)
    assert thpt.place.row == 1
    assert thpt.place.column == "THPT"
    assert thpt.place.headings == ("Điểm chuẩn 2025 – chương trình chuẩn",)
    assert thpt.place.title == "Điểm chuẩn năm 2025"
    dgnl = _fact(ex, code="7480101", method="đánh giá năng lực")
    assert (dgnl.value, dgnl.scale) == (935.0, 1200.0)
    clc = _fact(ex, programme="chất lượng cao", method="thi tốt nghiệp THPT")
    assert (clc.major, clc.code, clc.value) == ("Khoa học Máy tính", "7480101_CLC", 24.9)


def test_a_dash_cell_says_the_major_is_not_admitted_that_way(tmp_path: Path) -> None:
    ex = _read(tmp_path, "diem-chuan-2025.md", CUTOFFS_MD)
    fact = _fact(ex, major="Trí tuệ Nhân tạo", method="học bạ")
    assert fact.offered is False
    assert fact.value is None


def test_a_value_above_its_method_s_stated_scale_is_left_out_for_staff(tmp_path: Path) -> None:
    ex = _read(tmp_path, "diem-chuan-2025.md", CUTOFFS_MD)
    # 31,5 in the ĐGNL column (thang 1.200) is fine; a THPT score of 31,5 would not be.
    assert _fact(ex, major="Tài chính - Ngân hàng", method="đánh giá năng lực").value == 31.5
    broken = CUTOFFS_MD.replace("| 24,00 |", "| 34,00 |")
    ex = _read(tmp_path, "diem-chuan-2025.md", broken)
    assert not [f for f in ex.facts if f.major == "Tài chính - Ngân hàng" and f.value == 34.0]
    (rejected,) = [r for r in ex.rejected if r.text == "34,00"]
    assert rejected.reason == "lớn hơn thang điểm 30"
    assert "hàng 3, cột THPT" in rejected.place.describe()


def test_a_name_with_a_dash_is_split_only_before_a_programme(tmp_path: Path) -> None:
    ex = _read(tmp_path, "diem-chuan-2025.md", CUTOFFS_MD)
    majors = {i.name: i for i in ex.items if i.kind == MAJOR}
    assert "Tài chính - Ngân hàng" in majors
    assert majors["Khoa học Máy tính"].aliases == ("KHMT",)  # its initials in brackets
    assert majors["Khoa học Máy tính"].code == "7480101"
    assert "Tổng" not in majors  # a total row names no major and has no code


def test_columns_by_year_read_their_year_and_a_column_of_neither_is_skipped(
    tmp_path: Path,
) -> None:
    ex = _read(tmp_path, "diem-chuan-2025.md", CUTOFFS_MD)
    older = _fact(ex, major="Khoa học Máy tính", year=2024)
    assert (older.value, older.method, older.place.column) == (
        26.4,
        "thi tốt nghiệp THPT",
        "Năm 2024",
    )
    assert not [f for f in ex.facts if f.place.column == "Chênh lệch"]


def test_a_csv_with_year_captions_gives_every_year_and_combination(tmp_path: Path) -> None:
    ex = _read(tmp_path, "diemchuan.csv", CUTOFFS_CSV)
    cutoffs = [f for f in ex.facts if f.attribute == CUTOFF]
    assert len(cutoffs) == 10
    newest = _fact(ex, attribute=CUTOFF, code="7480101", year=2024, method=None)
    assert newest.value == 27.3
    assert _fact(ex, attribute=CUTOFF, code="7480101", year=2023, method=None).value == 26.9
    assert _fact(ex, attribute=CUTOFF, code="7480104_TT", method=None).programme == "tiên tiến"
    japanese = _fact(ex, attribute=CUTOFF, code="7480201_CLCN", method=None)
    assert japanese.programme == "Chất lượng cao định hướng nhật bản"  # more than the CLC
    assert japanese.major == "CÔNG NGHỆ THÔNG TIN"
    chip = _fact(ex, attribute=CUTOFF, code="75202a1", method="đánh giá năng lực")
    assert (chip.major, chip.programme, chip.value) == (
        "Thiết kế vi mạch",
        "Hướng vi mạch bán dẫn",  # an unclosed bracket still qualifies
        910.0,
    )
    combos = _fact(ex, attribute=COMBINATIONS, code="7480104_TT")
    assert combos.combinations == ("A00", "D01", "D07")
    kinds = {(i.kind, i.name) for i in ex.items}
    assert (PROGRAMME, "tiên tiến") in kinds
    assert ("combination", "D07") in kinds


def test_a_table_with_no_year_anywhere_lists_its_cells_for_staff(tmp_path: Path) -> None:
    text = (
        "# Chỉ tiêu\n\n| Ngành | Mã ngành | Chỉ tiêu |\n|---|---|---|\n"
        "| Khoa học Máy tính | 7480101 | 240 |\n"
    )
    ex = _read(tmp_path, "chi-tieu.md", text)
    assert ex.facts == []
    assert [(r.text, r.reason) for r in ex.rejected] == [("240", "không rõ năm")]
    ex = _read(tmp_path, "chi-tieu.md", text.replace("# Chỉ tiêu", "# Chỉ tiêu năm 2026"))
    assert _fact(ex, attribute=QUOTA).value == 240.0


def test_an_html_table_reads_like_a_markdown_one(tmp_path: Path) -> None:
    html = (
        "<html><head><title>Điểm chuẩn 2024</title></head><body><h1>Điểm chuẩn năm 2024</h1>"
        "<table><tr><th>Tên ngành</th><th>Mã ngành</th><th>Điểm chuẩn</th></tr>"
        "<tr><td>Kỹ thuật phần mềm</td><td>7480103</td><td>26,85</td></tr></table></body></html>"
    )
    ex = _read(tmp_path, "diem-chuan.html", html)
    fact = _fact(ex, attribute=CUTOFF)
    assert (fact.major, fact.year, fact.value, fact.method) == (
        "Kỹ thuật phần mềm",
        2024,
        26.85,
        None,
    )


def test_a_table_that_names_no_major_gives_nothing(tmp_path: Path) -> None:
    text = "# Lịch 2026\n\n| Việc | Ngày |\n|---|---|\n| Nộp hồ sơ | 20/7/2026 |\n"
    ex = _read(tmp_path, "lich.md", text)
    assert (ex.facts, ex.rejected, ex.items) == ([], [], [])


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("26,85", "score", 26.85),
        ("27.5", "score", 27.5),
        ("27.125", "score", 27.125),
        ("1.200", "score", 1200.0),
        ("935", "score", 935.0),
        ("15.000.000", "amount", 15000000.0),
        ("15,000,000", "amount", 15000000.0),
        ("1.520", "count", 1520.0),
        ("—", "score", None),
        ("xét riêng", "score", None),
    ],
)
def test_numbers_are_read_as_written(text: str, kind: str, value: float | None) -> None:
    assert read_number(text, kind) == value


def test_a_row_keeps_an_escaped_bar_inside_its_cell() -> None:
    assert split_row(r"| A \| B | 7 |") == ("A | B", "7")


def test_initials_skip_the_little_words() -> None:
    assert initials("Khoa học Máy tính") == "khmt"
    assert initials("Mạng máy tính và truyền thông") == "mmttt"
    assert initials("Marketing") == ""


FEES_MD = """# Học phí năm học 2026–2027

## Bảng học phí năm học 2026–2027

| Chương trình | Ngành áp dụng | Học phí/năm | Học phí/tín chỉ |
|---|---|---|---|
| Chuẩn – nhóm 1 | KHMT, KTPM, HTTT | 32.500.000 đồng | 930.000 đồng |
| Chất lượng cao | KHMT, KTPM (mã _CLC) | 58.000.000 đồng | thu trọn gói |
| Liên kết quốc tế | Cử nhân CNTT liên kết Kestrel Bay | 95 triệu | 2.000.000 |
"""


def test_a_fee_row_applies_to_every_major_it_lists_with_its_unit(tmp_path: Path) -> None:
    ex = _read(tmp_path, "hoc-phi.md", FEES_MD)
    standard = _fact(ex, major="Khoa học máy tính", programme=None, unit="đồng/năm")
    assert (standard.year, standard.value, standard.text) == (2026, 32_500_000.0, "32.500.000 đồng")
    assert _fact(ex, major="Hệ thống thông tin", unit="đồng/tín chỉ").value == 930_000.0
    clc = _fact(ex, major="Kỹ thuật phần mềm", programme="chất lượng cao", unit="đồng/năm")
    assert clc.value == 58_000_000.0
    joint = _fact(ex, major="Công nghệ thông tin", programme="liên kết quốc tế")
    assert (joint.value, joint.unit) == (95_000_000.0, "triệu/năm")  # "95 triệu" read out
    reasons = {r.text: r.reason for r in ex.rejected}
    assert reasons == {"thu trọn gói": "không phải một số", "2.000.000": "không rõ đơn vị"}


def test_columns_by_campus_give_each_campus_its_value_and_unknown_ones_are_left_out(
    tmp_path: Path,
) -> None:
    ex = _read(
        tmp_path,
        "campus.md",
        "# Điểm chuẩn năm 2025\n\n"
        "| Ngành | Mã ngành | Điểm chuẩn Hà Nội | Điểm chuẩn TP. HCM"
        " | Chỉ tiêu BVH | Chỉ tiêu BVS |\n"
        "|---|---|---|---|---|---|\n"
        "| Khoa học máy tính | 7480101 | 26,50 | 25,10 | 120 | 80 |\n",
    )
    assert _fact(ex, campus="Hà Nội").value == 26.5
    assert _fact(ex, campus="TP. Hồ Chí Minh").value == 25.1
    assert not [f for f in ex.facts if f.attribute == QUOTA]  # "BVH", "BVS": campuses unknown
    assert {r.place.column for r in ex.rejected} == {"Chỉ tiêu BVH", "Chỉ tiêu BVS"}


def test_a_table_under_a_campus_s_heading_or_lead_holds_that_campus_s_values(
    tmp_path: Path,
) -> None:
    table = "| Ngành | Mã ngành | THPT |\n|---|---|---|\n| Khoa học máy tính | 7480101 | {} |\n"
    ex = _read(
        tmp_path,
        "campuses.md",
        "# Điểm chuẩn năm 2025\n\nTrường Đại học Công nghệ Hà Nội thông báo điểm chuẩn:\n\n"
        "1. CƠ SỞ ĐÀO TẠO HÀ NỘI\n\n" + table.format("26,50") + "\n"
        "2. CƠ SỞ ĐÀO TẠO TP. HCM\n\n" + table.format("24,10") + "\n"
        "## Chương trình liên kết\n\nTrường Đại học Công nghệ Hà Nội xét tuyển:\n\n"
        + table.format("22,00"),
    )
    assert _fact(ex, campus="Hà Nội").value == 26.5
    assert _fact(ex, campus="TP. Hồ Chí Minh").value == 24.1
    # a city in the school's name is no campus
    assert _fact(ex, value=22.0).campus is None
    assert not conflicts(ex.facts)
