"""Hostile PDFs are read as far as they are good: a poster-sized page is rendered under the pixel
budget, pages past the cap and pages MuPDF cannot read are skipped, and once the OCR budget is
spent the remaining pages keep their text layer; each skip is logged and listed in the meta.
The PDFs are made in the test with PyMuPDF; OCR is the real Tesseract."""

from __future__ import annotations

import logging
import math
import shutil
from pathlib import Path

import pymupdf
import pytest

from bot.core.errors import IngestError
from bot.core.settings import IngestSettings
from bot.knowledge.ingest import pdf_options
from retrieval.loading import load_file
from retrieval.loading.ocr import OcrOptions, render_zoom
from retrieval.loading.pdf import OCR_BUDGET_SPENT, PdfOptions, load_pdf

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="tesseract-ocr is not installed"
)

POSTER_PT = 7000


def sentence(n: int) -> str:
    return f"Page {n}: the tuition for the programme is {n} million dong for each semester."


def make_pdf(path: Path, pages: int, *, poster_at: int | None = None) -> Path:
    """`pages` A4 pages with a text layer; page `poster_at` is 7,000 pt square, with a layer too
    short to be trusted (so it is OCR'd)."""
    pdf = pymupdf.open()
    for n in range(1, pages + 1):
        if n == poster_at:
            page = pdf.new_page(width=POSTER_PT, height=POSTER_PT)
            page.insert_text((72, 144), "Poster", fontsize=40)
        else:
            page = pdf.new_page()
            page.insert_text((56, 72), sentence(n), fontsize=10)
    pdf.save(path)
    pdf.close()
    return path


def break_page(path: Path, number: int) -> Path:
    """The same PDF with page `number`'s object made a page-tree node that holds itself: MuPDF
    opens the file but raises on loading that page ("cycle in page tree")."""
    with pymupdf.open(path) as pdf:
        xref = pdf[number - 1].xref
        pdf.update_object(xref, f"<< /Type /Pages /Kids [{xref} 0 R] /Count 1 >>")
        data = pdf.tobytes()
    path.write_bytes(data)
    return path


def test_a_poster_sized_page_is_rendered_at_the_dpi_that_fits_the_pixel_budget() -> None:
    poster = pymupdf.Rect(0, 0, POSTER_PT, POSTER_PT)
    zoom = render_zoom(poster, OcrOptions())  # 25 Mpx, 300 DPI

    side = math.ceil(POSTER_PT * zoom) + 1
    assert side * side <= 25_000_000
    assert 50 < zoom * 72 < 52  # ~51 DPI: as near the budget as it goes, not 300 DPI
    assert render_zoom(pymupdf.paper_rect("a4"), OcrOptions()) == 300 / 72  # A4 is untouched


@needs_tesseract
def test_a_huge_page_goes_to_tesseract_under_the_pixel_budget_and_the_good_pages_are_kept(
    tmp_path: Path,
) -> None:
    path = make_pdf(tmp_path / "poster.pdf", 3, poster_at=2)
    budget = 250_000  # small, so that Tesseract is quick
    doc = load_pdf(path, options=PdfOptions(ocr=OcrOptions(max_pixels=budget)))

    poster = doc.meta["pages"][1]
    width, height, dpi = poster["ocr_image"]
    assert width * height <= budget
    assert width * height > 0.9 * budget  # rendered at the DPI that fits, not skipped
    assert dpi < 10
    assert [s.page for s in doc.sections] == [1, 2, 3]
    assert sentence(1) in doc.sections[0].text
    assert sentence(3) in doc.sections[2].text


def test_a_page_cap_keeps_the_first_pages_and_logs_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = make_pdf(tmp_path / "long.pdf", 4)
    with caplog.at_level(logging.WARNING, logger="retrieval.loading.pdf"):
        doc = load_file(path, PdfOptions(max_pages=2))

    assert [s.text for s in doc.sections] == [sentence(1), sentence(2)]
    assert doc.meta["page_count"] == 4
    assert doc.meta["pages_over_limit"] == 2
    assert [p["page"] for p in doc.meta["pages"]] == [1, 2]
    assert "long.pdf: 4 pages, only the first 2 read" in caplog.text
    assert "pages 3-4 skipped" in caplog.text


def test_a_spent_ocr_budget_skips_ocr_and_keeps_the_text_layer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = make_pdf(tmp_path / "scan.pdf", 3, poster_at=3)  # page 3's layer is too short
    # A command that does not exist: were OCR tried, the page would say "OCR unavailable".
    ocr = OcrOptions(budget_s=0, command="no-such-tesseract")
    with caplog.at_level(logging.WARNING, logger="retrieval.loading.pdf"):
        doc = load_pdf(path, options=PdfOptions(ocr=ocr))

    poster = doc.meta["pages"][2]
    assert poster["source"] == "layer"
    assert poster["reason"] == f"short text layer; {OCR_BUDGET_SPENT}"
    assert "ocr_image" not in poster
    assert doc.sections[2].text == "Poster"  # the layer is kept
    assert doc.meta["skipped_pages"] == [{"page": 3, "reason": poster["reason"]}]
    assert "scan.pdf: OCR budget of 0 s spent; pages 3 kept their text layer" in caplog.text


def test_a_broken_page_is_skipped_and_the_others_are_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = break_page(make_pdf(tmp_path / "broken.pdf", 3), 2)
    with caplog.at_level(logging.WARNING, logger="retrieval.loading.pdf"):
        doc = load_file(path)

    assert [(s.page, s.text) for s in doc.sections] == [(1, sentence(1)), (3, sentence(3))]
    [skipped] = doc.meta["skipped_pages"]
    assert skipped["page"] == 2
    assert skipped["reason"].startswith("unreadable page (")
    assert "cycle" in skipped["reason"]
    assert "broken.pdf: page 2 skipped, MuPDF cannot read it" in caplog.text


def test_a_pdf_whose_every_page_is_broken_is_refused_as_corrupt(tmp_path: Path) -> None:
    path = break_page(make_pdf(tmp_path / "lost.pdf", 1), 1)

    with pytest.raises(IngestError, match=r"lost\.pdf: corrupt PDF \(no page can be read"):
        load_file(path)


def test_the_ingest_settings_set_the_pdf_limits() -> None:
    settings = IngestSettings(max_pdf_pages=7, max_page_pixels=1_000_000, ocr_budget_s=3)

    options = pdf_options(settings)

    assert (options.max_pages, options.ocr.max_pixels, options.ocr.budget_s) == (7, 1_000_000, 3)
