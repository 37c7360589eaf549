"""PDF pages read from their text layer or OCR'd with Tesseract; PDFs are made with PyMuPDF."""

from __future__ import annotations

import shutil
from pathlib import Path

import pymupdf
import pytest

from bot.core.errors import IngestError
from retrieval.loading import load_file
from retrieval.loading.ocr import OcrOptions
from retrieval.loading.pdf import load_pdf
from retrieval.loading.quality import text_quality
from tests.retrieval._support import PAGE_1, PAGE_2, flat, write_pdf

RULE = (
    "<p>Điều 1. Quy định về công tác sinh viên đối với chương trình đào tạo đại học hệ chính"
    " quy.</p><p>Sinh viên nộp hồ sơ nhập học trước ngày 15 tháng 8 năm 2025.</p>"
)
GARBLED = (
    "C6ng tric sinh vi6n Didu 1 Quyh dinh si5 vO c6ng tdc sinh vi6n d6i vdi chuong trinh ddo"
    " tao dai hoc he chinh quy. Sinh vi6n n6p h6 so nhap hoc tru6c ngay 15 thang 8 nam 2025."
)
TCVN3 = "§iÒu 1. Quy ®Þnh vÒ c«ng t¸c sinh viªn ®èi víi ch­¬ng tr×nh ®µo t¹o ®¹i häc hÖ chÝnh quy"

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="tesseract-ocr is not installed"
)


def text_page(pdf: pymupdf.Document, html: str) -> pymupdf.Page:
    page = pdf.new_page()
    page.insert_htmlbox(pymupdf.Rect(50, 50, 545, 790), f"<div style='font-size:14pt'>{html}</div>")
    return page


def scanned_page(pdf: pymupdf.Document, html: str, *, layer: str = "") -> None:
    """A page that is only an image of `html` at 300 DPI, with `layer` as invisible text."""
    with pymupdf.open() as source:
        pixmap = text_page(source, html).get_pixmap(dpi=300)
    page = pdf.new_page()
    page.insert_image(page.rect, pixmap=pixmap)
    if layer:
        # render_mode 3 is invisible text, as OCR layers of scanners are written.
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 790), layer, fontsize=11, render_mode=3)


def save(pdf: pymupdf.Document, path: Path) -> Path:
    pdf.save(path)
    pdf.close()
    return path


def test_clean_vietnamese_scores_above_garbled_ocr_layer_above_tcvn3() -> None:
    clean = text_quality(flat(RULE.replace("<p>", " ").replace("</p>", " ")))
    garbled, legacy = text_quality(GARBLED), text_quality(TCVN3)

    assert clean > 0.9
    assert clean > garbled > legacy
    assert garbled < 0.5


def test_quality_of_no_words_is_zero_and_english_prose_is_clean() -> None:
    assert text_quality("") == 0.0
    assert text_quality("12 / 34") == 0.0
    assert text_quality("The tuition fee is about forty million dong per year.") == 1.0


def test_codes_and_times_do_not_count_against_quality() -> None:
    text = "Căn cứ Thông tư số 08/2022/TT-BGDĐT ngày 06/6/2022; tổ hợp A00, D01 lúc 15h30."

    assert text_quality(text) == 1.0


def test_vni_encoded_text_scores_low() -> None:
    vni = "Ñieàu 1. Quy ñònh veà coâng taùc sinh vieân ñoái vôùi chöông trình ñaøo taïo ñaïi hoïc"

    assert text_quality(vni) < 0.5


def test_text_layer_page_is_read_from_the_layer(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    text_page(pdf, RULE)
    doc = load_pdf(save(pdf, tmp_path / "rule.pdf"))

    assert "Quy định về công tác sinh viên" in flat(doc.sections[0].text)
    assert doc.language == "vi"
    (page,) = doc.meta["pages"]
    assert page["source"] == "layer"
    assert page["quality"] > 0.9
    assert "ocr_quality" not in page
    assert doc.meta["ocr_pages"] == 0


@needs_tesseract
def test_image_only_page_is_ocrd(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    scanned_page(pdf, RULE)
    doc = load_pdf(save(pdf, tmp_path / "scan.pdf"))

    text = flat(doc.sections[0].text)
    assert "sinh viên" in text
    assert "hồ sơ nhập học" in text
    (page,) = doc.meta["pages"]
    assert page["source"] == "ocr"
    assert page["layer_chars"] == 0
    assert page["quality"] > 0.8
    assert doc.meta["pages_without_text"] == []


@needs_tesseract
def test_garbled_text_layer_loses_to_ocr(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    scanned_page(pdf, RULE, layer=GARBLED)
    doc = load_pdf(save(pdf, tmp_path / "garbled.pdf"))

    (page,) = doc.meta["pages"]
    assert page["layer_quality"] < 0.5
    assert page["source"] == "ocr"
    assert page["ocr_quality"] > page["layer_quality"]
    assert "vi6n" not in doc.sections[0].text
    assert "công tác sinh viên" in flat(doc.sections[0].text)


def test_without_tesseract_the_layer_is_kept_and_empty_pages_say_why(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    scanned_page(pdf, RULE, layer=GARBLED)
    scanned_page(pdf, RULE)
    path = save(pdf, tmp_path / "scan.pdf")

    doc = load_pdf(path, ocr=OcrOptions(command="no-such-tesseract"))

    first, second = doc.meta["pages"]
    assert first["source"] == "layer"
    assert "OCR unavailable" in first["reason"]
    assert second["source"] == "empty"
    assert "OCR unavailable" in second["reason"]
    assert doc.meta["pages_without_text"] == [2]
    assert [s.page for s in doc.sections] == [1]


@needs_tesseract
def test_sections_keep_one_based_page_numbers_across_layer_and_ocr(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    text_page(pdf, RULE)
    pdf.new_page()  # blank: nothing to read
    scanned_page(pdf, "<p>Học phí dự kiến 40.000.000 đồng mỗi năm học cho sinh viên.</p>")
    doc = load_pdf(save(pdf, tmp_path / "mixed.pdf"))

    assert [s.page for s in doc.sections] == [1, 3]
    assert [p["source"] for p in doc.meta["pages"]] == ["layer", "empty", "ocr"]
    assert doc.meta["pages"][1]["reason"]
    assert doc.meta["pages_without_text"] == [2]
    assert "Học phí" in doc.sections[1].text


def test_load_file_reads_pdfs_through_load_pdf(tmp_path: Path) -> None:
    pdf = pymupdf.open()
    text_page(pdf, RULE)
    doc = load_file(save(pdf, tmp_path / "rule.pdf"))

    assert doc.meta["pages"][0]["source"] == "layer"
    assert doc.sections[0].page == 1


@pytest.mark.parametrize(
    ("raw", "reason"),
    [(b"%PDF-1.7\nnot really a pdf at all\n", "corrupt"), (b"hello", "not a PDF")],
)
def test_corrupt_pdf_is_an_ingest_error(tmp_path: Path, raw: bytes, reason: str) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(raw)

    with pytest.raises(IngestError, match=rf"bad\.pdf: {reason}"):
        load_pdf(path)


# --- loaded through load_file ------------------------------------------------------------------


def test_pdf_has_one_section_per_page_and_lists_pages_without_text(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "tb.pdf", [PAGE_1, PAGE_2, None], title="Thông báo tuyển sinh")

    doc = load_file(path)

    assert doc.title == "Thông báo tuyển sinh"
    assert doc.language == "vi"
    assert [(s.page, s.heading_path) for s in doc.sections] == [(1, ()), (2, ())]
    assert flat(doc.sections[0].text) == (
        "THÔNG BÁO TUYỂN SINH Điểm chuẩn ngành Khoa học máy tính là 28.5 điểm."
    )
    assert flat(doc.sections[1].text) == (
        "Học phí dự kiến 40.000.000 đồng mỗi năm. Hạn nộp hồ sơ: 15/6/2026."
    )
    assert doc.meta["page_count"] == 3
    assert doc.meta["pages_without_text"] == [3]


def test_pdf_without_metadata_title_takes_the_document_type_line(tmp_path: Path) -> None:
    pages = ["<p>HỌC VIỆN X</p><p>Số: 1/TB</p><p>THÔNG BÁO</p><p>V/v nhập học 2025</p>" + PAGE_2]
    doc = load_file(write_pdf(tmp_path / "scan_0042.pdf", pages, title="SDaotao_45825072115040"))

    assert doc.title.startswith("THÔNG BÁO V/v nhập học 2025")


def test_pdf_page_showing_only_a_page_number_counts_as_without_text(tmp_path: Path) -> None:
    doc = load_file(write_pdf(tmp_path / "p.pdf", [PAGE_1, "<p>2</p>"]))

    assert [s.page for s in doc.sections] == [1]
    assert doc.meta["pages_without_text"] == [2]


def test_scanned_pdf_loads_with_no_sections(tmp_path: Path) -> None:
    doc = load_file(write_pdf(tmp_path / "scan.pdf", [None, None]))

    assert doc.sections == ()
    assert doc.meta["pages_without_text"] == [1, 2]
    assert doc.title == "Scan"
