"""Tables read from a PDF's text layer into rows of cell texts (retrieval.loading.pdf_tables),
and from there into facts, as ingest reads them."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from retrieval.facts.book import build_book
from retrieval.facts.extract import extract_facts
from retrieval.facts.model import CAMPUS, COMBINATIONS, MAJOR, QUOTA
from retrieval.guard.vocabulary import load_guard
from retrieval.loading.ocr import OcrOptions
from retrieval.loading.pdf import load_pdf
from retrieval.loading.pdf_tables import page_tables
from tests.retrieval._support import write_pdf

_CELL = "style='border:1px solid black'"


def _cells(tag: str, *cells: str, **spans: str) -> str:
    return "".join(
        f"<{tag} {_CELL} {spans.get(f'c{i}', '')}>{c}</{tag}>" for i, c in enumerate(cells)
    )


# A notice laid out as published: a quota header spanning two campus columns, a body row that
# packs two majors one per line, and a combinations cell merged over two rows.
NOTICE = f"""<p>THÔNG BÁO TUYỂN SINH VỪA LÀM VỪA HỌC NĂM 2025</p><p>I. CHỈ TIÊU TUYỂN SINH:</p>
<table style='border-collapse:collapse'>
<tr>{
    _cells(
        "th",
        "Mã ngành",
        "Ngành đào tạo",
        "Chỉ tiêu",
        c0="rowspan='2'",
        c1="rowspan='2'",
        c2="colspan='2'",
    )
}</tr>
<tr>{_cells("th", "Hà Nội", "TP HCM")}</tr>
<tr>{
    _cells("td", "7480201<br>7340301", "Công nghệ thông tin<br>Kế toán", "200<br>80", "100<br>50")
}</tr>
</table>
<p>II. TỔ HỢP XÉT TUYỂN:</p>
<table style='border-collapse:collapse'>
<tr>{_cells("th", "Ngành đào tạo", "Mã ngành", "Tổ hợp xét tuyển")}</tr>
<tr>{_cells("td", "Công nghệ thông tin học", "7480201", "A00, A01, X06", c2="rowspan='2'")}</tr>
<tr>{_cells("td", "Kế toán", "7340301")}</tr>
</table>"""


def _page(tmp_path: Path, html: str) -> list[dict[str, object]]:
    path = write_pdf(tmp_path / "notice.pdf", [html])
    with pymupdf.open(path) as pdf:
        return page_tables(pdf[0])


def test_a_ruled_table_is_read_by_its_body_columns_with_spans_packed_rows_and_merges(
    tmp_path: Path,
) -> None:
    quotas, combinations = _page(tmp_path, NOTICE)
    assert quotas["header"] == ["Mã ngành", "Ngành đào tạo", "Chỉ tiêu Hà Nội", "Chỉ tiêu TP HCM"]
    assert quotas["rows"] == [
        ["7480201", "Công nghệ thông tin", "200", "100"],
        ["7340301", "Kế toán", "80", "50"],
    ]
    assert quotas["lead"].endswith("NĂM 2025 I. CHỈ TIÊU TUYỂN SINH:")
    assert combinations["rows"] == [
        ["Công nghệ thông tin học", "7480201", "A00, A01, X06"],
        ["Kế toán", "7340301", "A00, A01, X06"],
    ]
    # the lead is the prose above, never the cells of the table before it
    assert combinations["lead"] == "II. TỔ HỢP XÉT TUYỂN:"


def test_a_packed_row_whose_figures_disagree_on_the_count_is_kept_whole(tmp_path: Path) -> None:
    html = f"""<table style='border-collapse:collapse'>
    <tr>{_cells("th", "Mã ngành", "Ngành đào tạo", "Chỉ tiêu")}</tr>
    <tr>{_cells("td", "7480201<br>7340301", "Công nghệ thông tin<br>Kế toán", "280")}</tr>
    <tr>{_cells("td", "7340101", "Quản trị kinh doanh", "150")}</tr>
    </table>"""
    (table,) = _page(tmp_path, html)
    assert table["rows"] == [
        ["7480201 7340301", "Công nghệ thông tin Kế toán", "280"],
        ["7340101", "Quản trị kinh doanh", "150"],
    ]


def test_a_pdf_s_tables_give_facts_and_one_major_per_code(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "notice.pdf", [NOTICE, "<p>Trang không có bảng.</p>"])
    doc = load_pdf(path, ocr=OcrOptions(enabled=False))
    assert [t["page"] for t in doc.meta["tables"]] == [1, 1]
    extraction = extract_facts(doc, load_guard())
    combos = {(f.major, f.combinations) for f in extraction.facts if f.attribute == COMBINATIONS}
    assert combos == {
        ("Công nghệ thông tin học", ("A00", "A01", "X06")),
        ("Kế toán", ("A00", "A01", "X06")),
    }
    assert all(f.year == 2025 and f.place.page == 1 for f in extraction.facts)
    # a quota by campus: each column holds its campus's
    quotas = {(f.major, f.campus, f.value) for f in extraction.facts if f.attribute == QUOTA}
    assert quotas == {
        ("Công nghệ thông tin", "Hà Nội", 200),
        ("Công nghệ thông tin", "TP. Hồ Chí Minh", 100),
        ("Kế toán", "Hà Nội", 80),
        ("Kế toán", "TP. Hồ Chí Minh", 50),
    }
    assert {i.name for i in extraction.items if i.kind == CAMPUS} == {"Hà Nội", "TP. Hồ Chí Minh"}
    items = [(i.kind, i.name, i.code, list(i.aliases)) for i in extraction.items if i.kind == MAJOR]
    book = build_book(extraction.facts, items)
    it = book.major_named("Công nghệ thông tin")
    assert it is not None
    assert it.code == "7480201"
    assert book.major_named("công nghệ thông tin học") is it
    assert {f.major for f in book.facts} == {"Công nghệ thông tin", "Kế toán"}
    assert len(book.facts) == len(extraction.facts)  # no campus's quota clashes with another's


def test_a_page_without_a_ruled_table_adds_no_tables(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "plain.pdf", ["<p>Thông báo không có bảng nào.</p>"])
    assert "tables" not in load_pdf(path, ocr=OcrOptions(enabled=False)).meta
