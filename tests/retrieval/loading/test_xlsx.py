"""Spreadsheets: real .xlsx files made with openpyxl, read as tables, and their facts."""

from __future__ import annotations

import zipfile
from datetime import date
from pathlib import Path

import pytest
from openpyxl import Workbook

from bot.core.errors import IngestError
from retrieval.facts.extract import extract_facts
from retrieval.facts.model import CUTOFF
from retrieval.guard.vocabulary import load_guard
from retrieval.loading import SUPPORTED_SUFFIXES, load_file


def _workbook(path: Path) -> Path:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Điểm chuẩn 2025"
    sheet.append(["Ngành", "Mã ngành", "Điểm chuẩn", "Hạn xác nhận"])
    sheet.append(["Khoa học máy tính", "7480101", 26.85, date(2025, 8, 20)])
    sheet.append(["Kỹ thuật phần mềm", "7480103", 26.0, None])
    sheet.append(["Tổng", None, "=SUM(C2:C3)", None])
    hidden = book.create_sheet("Nháp")
    hidden.append(["Ngành", "Điểm chuẩn"])
    hidden.append(["Khoa học máy tính", 99])
    hidden.sheet_state = "hidden"
    book.save(path)
    return path


def test_a_sheet_is_read_as_a_table_under_its_name(tmp_path: Path) -> None:
    assert ".xlsx" in SUPPORTED_SUFFIXES
    doc = load_file(_workbook(tmp_path / "diem-chuan.xlsx"))
    section = doc.sections[0]
    assert {s.heading_path for s in doc.sections} == {("Điểm chuẩn 2025",)}  # not the hidden one
    assert "99" not in "\n".join(s.text for s in doc.sections)
    lines = section.text.splitlines()
    assert lines[0] == "| Ngành | Mã ngành | Điểm chuẩn | Hạn xác nhận |"
    assert lines[2] == "| Khoa học máy tính | 7480101 | 26.85 | 20/08/2025 |"
    assert lines[3] == "| Kỹ thuật phần mềm | 7480103 | 26 |  |"  # a whole number, no ".0"


def test_its_cutoffs_become_facts_of_the_sheet_s_year(tmp_path: Path) -> None:
    doc = load_file(_workbook(tmp_path / "diem-chuan.xlsx"))
    facts = [f for f in extract_facts(doc, load_guard()).facts if f.attribute == CUTOFF]
    assert [(f.major, f.year, f.value) for f in facts] == [
        ("Khoa học máy tính", 2025, 26.85),
        ("Kỹ thuật phần mềm", 2025, 26.0),
    ]


def test_a_broken_workbook_is_a_clear_error(tmp_path: Path) -> None:
    path = _workbook(tmp_path / "diem-chuan.xlsx")
    path.write_bytes(path.read_bytes()[:500])
    with pytest.raises(IngestError, match=r"diem-chuan.xlsx: not a readable .xlsx file"):
        load_file(path)


def test_a_workbook_with_a_damaged_sheet_is_a_clear_error(tmp_path: Path) -> None:
    # The zip opens and the sheet's XML breaks only while its rows are read (read-only mode).
    path = _workbook(tmp_path / "diem-chuan.xlsx")
    with zipfile.ZipFile(path) as whole:
        parts = {name: whole.read(name) for name in whole.namelist()}
    sheet = "xl/worksheets/sheet1.xml"
    parts[sheet] = parts[sheet][: len(parts[sheet]) // 2]
    with zipfile.ZipFile(path, "w") as damaged:
        for name, data in parts.items():
            damaged.writestr(name, data)
    with pytest.raises(IngestError, match=r"diem-chuan.xlsx: not a readable .xlsx file"):
        load_file(path)
