"""The dispatcher: real files written to tmp_path, unusable files, folders, and the shared UIT
and PTIT corpora."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.core.errors import IngestError
from retrieval.loading import SUPPORTED_SUFFIXES, load_directory, load_file
from retrieval.loading.document import LoadedDocument
from tests.retrieval._support import PAGE_1, PAGE_2, PTIT, UIT, corpus, write, write_pdf

# --- bad input -------------------------------------------------------------------------------


def truncated_pdf(path: Path) -> bytes:
    write_pdf(path, [PAGE_1, PAGE_2, PAGE_1])
    raw = path.read_bytes()
    return raw[: len(raw) * 2 // 3]


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.md", b"", "empty"),
        ("blank.txt", b"  \n\n\t\n", "empty"),
        ("image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "binary"),
        ("noise.txt", bytes(range(1, 32)) * 40, "binary"),
        ("notes.docx", b"PK\x03\x04 later", "not a ZIP"),
        ("notes.doc", b"\xd0\xcf\x11\xe0 old Word", "unsupported"),
        ("archive.tar.gz", b"x", "unsupported"),
        ("README", b"no suffix", "unsupported"),
        ("garbage.pdf", b"%PDF-1.7\nnot really a pdf at all\n", "corrupt"),
        ("random.pdf", b"hello, no header", "not a PDF"),
        ("nul.csv", b"a,b\n1,\x002\n", "binary"),
        ("only-title.md", "# Chỉ có tiêu đề\n".encode(), "no text"),
    ],
)
def test_unusable_files_raise_ingest_error_naming_the_file(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)

    with pytest.raises(IngestError, match=reason) as error:
        load_file(path)

    assert name in str(error.value)


def test_truncated_pdf_is_an_ingest_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.pdf"
    path.write_bytes(truncated_pdf(tmp_path / "whole.pdf"))

    with pytest.raises(IngestError, match=r"cut\.pdf"):
        load_file(path)


def test_truncated_real_pdf_is_refused_not_repaired_into_garbage(tmp_path: Path) -> None:
    raw = (corpus(PTIT) / "Thong_bao-359_tuyen_sinh_VLVH_2025.pdf").read_bytes()
    path = tmp_path / "359.pdf"
    path.write_bytes(raw[: len(raw) // 3])

    with pytest.raises(IngestError, match=r"359\.pdf: truncated PDF"):
        load_file(path)


def test_missing_file_and_directory_are_ingest_errors(tmp_path: Path) -> None:
    (tmp_path / "folder.md").mkdir()

    with pytest.raises(IngestError, match=r"missing\.md: cannot read"):
        load_file(tmp_path / "missing.md")
    with pytest.raises(IngestError, match=r"folder\.md: cannot read"):
        load_file(tmp_path / "folder.md")


# --- directories -----------------------------------------------------------------------------


def test_load_directory_yields_documents_and_errors_in_sorted_order(tmp_path: Path) -> None:
    write(tmp_path / "b.md", "# B\nbody")
    write(tmp_path / "a.txt", "A body")
    (tmp_path / "empty.csv").write_bytes(b"")
    write(tmp_path / "skip.json", "{}")
    write(tmp_path / ".hidden.md", "# H\nbody")
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".git" / "x.md", "# X\nbody")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "c.md", "# C\nbody")

    results = list(load_directory(tmp_path))
    shallow = list(load_directory(tmp_path, recursive=False))

    assert [p.relative_to(tmp_path).as_posix() for p, _ in results] == [
        "a.txt",
        "b.md",
        "empty.csv",
        "sub/c.md",
    ]
    assert isinstance(results[2][1], IngestError)
    assert all(isinstance(d, LoadedDocument) for i, (_, d) in enumerate(results) if i != 2)
    assert [p.name for p, _ in shallow] == ["a.txt", "b.md", "empty.csv"]


def test_load_directory_of_a_missing_folder_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="not a directory"):
        list(load_directory(tmp_path / "nope"))


def test_supported_suffixes() -> None:
    expected = {".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".csv", ".docx", ".xlsx"}
    assert expected == SUPPORTED_SUFFIXES


# --- shared corpora ----------------------------------------------------------------------------


def test_every_uit_file_loads() -> None:
    results = list(load_directory(corpus(UIT)))

    assert len(results) == 35
    errors = [(path.name, doc) for path, doc in results if isinstance(doc, IngestError)]
    assert errors == []
    docs = [doc for _, doc in results if isinstance(doc, LoadedDocument)]
    assert all(doc.sections and doc.language == "vi" for doc in docs)
    assert sum(doc.url is not None for doc in docs) == 34  # all but the CSV


def test_uit_admission_methods_page_has_its_title_and_url() -> None:
    doc = load_file(corpus(UIT) / "phuong-thuc-tuyen-sinh.md")

    assert doc.title == "[2025] Dự kiến phương thức tuyển sinh năm 2025"
    assert doc.url == "https://tuyensinh.uit.edu.vn/phuong-thuc-tuyen-sinh"
    assert ("1. Phương thức 1",) in [s.heading_path for s in doc.sections]
    assert not any("Nguồn" in s.text for s in doc.sections)


def test_uit_cut_off_csv_has_one_table_per_year() -> None:
    doc = load_file(corpus(UIT) / "diemchuanUIT.csv")

    years = [s.heading_path for s in doc.sections]
    assert years == [(str(year),) for year in range(2024, 2018, -1)]
    header = "| STT | Mã ngành | Tên ngành | Tổ hợp môn | Điểm chuẩn | Điểm ĐGNL |"
    assert all(s.text.startswith(header + "\n| --- |") for s in doc.sections)


def test_ptit_pdf_with_a_text_layer_loads_with_page_numbers() -> None:
    doc = load_file(corpus(PTIT) / "Thong_bao-359_tuyen_sinh_VLVH_2025.pdf")

    assert doc.title == "THÔNG BÁO TUYỂN SINH VỪA LÀM VỪA HỌC TRÌNH ĐỘ ĐẠI HỌC NĂM 2025"
    assert [s.page for s in doc.sections] == [1, 2, 3, 4, 5]
    assert doc.meta["pages_without_text"] == []
    assert "7480201 Công nghệ thông tin" in doc.sections[0].text


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr not installed")
def test_ptit_scanned_pdf_is_read_by_ocr_page_by_page() -> None:
    # A scan with no text layer: every page comes from Tesseract, none is left empty.
    doc = load_file(corpus(PTIT) / "5.-Thong-bao-phuong-thuc-tuyen-sinh-2025.pdf")

    assert [s.page for s in doc.sections] == [1, 2, 3, 4, 5, 6]
    assert doc.meta["pages_without_text"] == []
    assert {p["source"] for p in doc.meta["pages"]} == {"ocr"}
    assert "tuyển sinh" in " ".join(s.text for s in doc.sections).lower()


def test_ptit_web_page_saved_as_pdf_is_read_as_html() -> None:
    doc = load_file(corpus(PTIT) / "2019-08-09_10-15-41.pdf")

    assert doc.meta["format"] == "html"
    assert doc.meta["declared_suffix"] == ".pdf"
    assert doc.url == "https://ptit.edu.vn/"
