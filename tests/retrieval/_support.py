"""What the retrieval tests share: the shared corpora, and files written for a test."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf
import pytest

DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"
UIT = DATASETS / "uit-admissions" / "corpus"
PTIT = DATASETS / "ptit-admissions" / "corpus"

# Two pages of a notice, as HTML for `write_pdf`.
PAGE_1 = "<p>THÔNG BÁO TUYỂN SINH</p><p>Điểm chuẩn ngành Khoa học máy tính là 28.5 điểm.</p>"
PAGE_2 = "<p>Học phí dự kiến 40.000.000 đồng mỗi năm.</p><p>Hạn nộp hồ sơ: 15/6/2026.</p>"


def corpus(folder: Path) -> Path:
    """`folder`, or the test skipped when the shared dataset is not on this machine."""
    if not folder.is_dir():
        pytest.skip(f"shared dataset not found at {folder}")
    return folder


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def write_pdf(path: Path, pages: Sequence[str | None], *, title: str = "") -> Path:
    """Pages from HTML: insert_htmlbox embeds a font with Vietnamese glyphs (helv has none)."""
    pdf = pymupdf.open()
    for html in pages:
        page = pdf.new_page()
        if html:
            page.insert_htmlbox(pymupdf.Rect(50, 50, 545, 790), html)
    if title:
        pdf.set_metadata({"title": title})
    pdf.save(path)
    pdf.close()
    return path


def flat(text: str) -> str:
    """`text` with its whitespace runs made single spaces."""
    return " ".join(text.split())
