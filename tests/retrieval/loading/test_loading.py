"""Loaders read real files written to tmp_path, and the shared UIT and PTIT corpora."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

import pymupdf
import pytest

from bot.core.errors import IngestError
from retrieval.loading import SUPPORTED_SUFFIXES, load_directory, load_file
from retrieval.loading.document import LoadedDocument, Section
from retrieval.loading.document import document_language

DATASETS = Path(__file__).resolve().parents[4] / "shared" / "datasets"
UIT = DATASETS / "uit-admissions" / "corpus"
PTIT = DATASETS / "ptit-admissions" / "corpus"


def corpus(folder: Path) -> Path:
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
    return " ".join(text.split())


# --- Markdown --------------------------------------------------------------------------------

MARKDOWN = """\
# Thông báo tuyển sinh 2025
_Nguồn: [https://tuyensinh.example.edu.vn/thong-bao](https://tuyensinh.example.edu.vn/thong-bao)_
Trường thông báo tuyển sinh như sau:

## I. ĐỐI TƯỢNG
- Tốt nghiệp THPT.
- Đủ sức khỏe.

### 1. Học phí
| Ngành | Học phí |
| --- | --- |
| CNTT | 40.000.000 |

```
# không phải tiêu đề
```
## II. **LIÊN HỆ**
Hotline: 0938.861.080.
"""


def test_markdown_title_url_and_heading_paths(tmp_path: Path) -> None:
    path = write(tmp_path / "thong-bao.md", MARKDOWN)

    doc = load_file(path)

    assert doc.source == str(path)
    assert doc.title == "Thông báo tuyển sinh 2025"
    assert doc.url == "https://tuyensinh.example.edu.vn/thong-bao"
    assert doc.language == "vi"
    assert doc.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [s.heading_path for s in doc.sections] == [
        (),
        ("I. ĐỐI TƯỢNG",),
        ("I. ĐỐI TƯỢNG", "1. Học phí"),
        ("II. LIÊN HỆ",),
    ]
    assert all(s.page is None for s in doc.sections)
    assert doc.sections[0].text == "Trường thông báo tuyển sinh như sau:"
    assert doc.sections[1].text == "- Tốt nghiệp THPT.\n- Đủ sức khỏe."
    table_and_code = doc.sections[2].text
    assert "| CNTT | 40.000.000 |" in table_and_code.split("\n")
    assert "# không phải tiêu đề" in table_and_code
    assert "Nguồn" not in "".join(s.text for s in doc.sections)


@pytest.mark.parametrize(
    ("line", "url"),
    [
        ("_Source: <https://uni.example.org/admissions>_", "https://uni.example.org/admissions"),
        ("Nguồn: https://uni.example.org/a?b=1", "https://uni.example.org/a?b=1"),
        ("_Nguồn: https://uni.example.org/hoc-phi-2026_", "https://uni.example.org/hoc-phi-2026"),
        ("[URL: https://uni.example.org/x/]", "https://uni.example.org/x/"),
    ],
)
def test_markdown_source_line_variants(tmp_path: Path, line: str, url: str) -> None:
    path = write(tmp_path / "page.md", f"# Title\n{line}\n\nBody text.\n")

    doc = load_file(path)

    assert doc.url == url
    assert doc.sections == (Section((), "Body text."),)


def test_markdown_scraper_header_gives_title_when_there_is_no_h1(tmp_path: Path) -> None:
    text = "[Học bổng – PTIT – Tuyển sinh]\n[URL: https://x.example.vn/hb]\n\n## Điều kiện\nGiỏi.\n"
    doc = load_file(write(tmp_path / "hb.md", text))

    assert doc.title == "Học bổng – PTIT – Tuyển sinh"
    assert doc.url == "https://x.example.vn/hb"
    assert doc.sections == (Section(("Điều kiện",), "Giỏi."),)


def test_markdown_without_heading_is_titled_after_the_file(tmp_path: Path) -> None:
    doc = load_file(write(tmp_path / "diem-chuan_2024.md", "Some English body text.\n"))

    assert doc.title == "Diem chuan 2024"
    assert doc.url is None
    assert doc.language == "en"


def test_markdown_drops_lines_of_images_without_alt_text(tmp_path: Path) -> None:
    text = "# T\nTrước.\n![](https://x.example/a.png)\n![Sơ đồ](https://x.example/b.png)\nSau.\n"
    doc = load_file(write(tmp_path / "img.md", text))

    assert doc.sections[0].text == "Trước.\n![Sơ đồ](https://x.example/b.png)\nSau."


# --- plain text ------------------------------------------------------------------------------


def test_text_file_is_one_section_titled_by_its_first_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "note.txt", "\n  Lịch tuyển sinh 2026  \n\nNộp hồ sơ trước 15/6/2026.\n"
    )

    doc = load_file(path)

    assert doc.title == "Lịch tuyển sinh 2026"
    assert doc.sections == (Section((), "  Lịch tuyển sinh 2026\n\nNộp hồ sơ trước 15/6/2026."),)


def test_text_file_with_a_long_first_line_is_titled_after_the_file(tmp_path: Path) -> None:
    doc = load_file(write(tmp_path / "long-line.txt", "word " * 40))

    assert doc.title == "Long line"


def test_utf8_bom_and_decomposed_vietnamese_are_normalised(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffHo\u0323c phi\u0301\r\nxong".encode())

    doc = load_file(path)

    assert doc.sections[0].text == "Học phí\nxong"


def test_windows_1258_text_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "cp1258.txt"
    path.write_bytes("Ho\u0323c phí năm nay".encode("cp1258"))

    assert load_file(path).sections[0].text == "Học phí năm nay"


# --- HTML ------------------------------------------------------------------------------------

HTML = """<!doctype html>
<html><head>
<title>Tuyển sinh 2025 &amp; học bổng</title>
<link rel="canonical" href="https://tuyensinh.example.edu.vn/2025">
<meta property="og:url" content="https://other.example/og">
<style>p { color: red }</style><script>var x = "<p>no</p>";</script>
</head><body>
<header><p>Trang chủ</p></header>
<nav><ul><li>Menu</li></ul></nav>
<h1>Tuyển sinh 2025</h1>
<p>Trường&nbsp;thông báo: xem <a href="https://tuyensinh.example.edu.vn/hd">hướng dẫn</a>
và <a href="/relative">trang này</a>.</p>
<h2>Chỉ tiêu</h2>
<ul><li>CNTT: 200</li><li>KHMT: 150</li></ul>
<table><tr><th>Ngành</th><th>Điểm</th></tr><tr><td>CNTT</td><td>28.5</td></tr></table>
<h3>Ghi chú</h3>
<p>Dòng một<br>Dòng hai</p>
<aside>Quảng cáo</aside><form><p>Đăng ký</p></form>
<footer>© 2025</footer>
</body></html>
"""


def test_html_keeps_body_text_structure_and_drops_page_chrome(tmp_path: Path) -> None:
    doc = load_file(write(tmp_path / "page.html", HTML))

    assert doc.title == "Tuyển sinh 2025 & học bổng"
    assert doc.url == "https://tuyensinh.example.edu.vn/2025"
    assert [s.heading_path for s in doc.sections] == [
        (),
        ("Chỉ tiêu",),
        ("Chỉ tiêu", "Ghi chú"),
    ]
    assert doc.sections[0].text == (
        "Trường thông báo: xem hướng dẫn (https://tuyensinh.example.edu.vn/hd) và trang này."
    )
    assert doc.sections[1].text == (
        "- CNTT: 200\n- KHMT: 150\n\n| Ngành | Điểm |\n| --- | --- |\n| CNTT | 28.5 |"
    )
    assert doc.sections[2].text == "Dòng một\nDòng hai"
    everything = "\n".join(s.text for s in doc.sections)
    for dropped in ("Menu", "Trang chủ", "Quảng cáo", "Đăng ký", "©", "color", "var x"):
        assert dropped not in everything


def test_html_without_title_or_canonical_uses_first_h1_and_og_url(tmp_path: Path) -> None:
    html = (
        '<meta property="og:url" content="https://x.example.vn/p">'
        "<h1>Học phí</h1><p>Một</p><h1>Khác</h1><p>Hai</p>"
    )
    doc = load_file(write(tmp_path / "p.htm", html))

    assert doc.title == "Học phí"
    assert doc.url == "https://x.example.vn/p"
    assert doc.sections == (Section((), "Một"), Section(("Khác",), "Hai"))


def test_malformed_html_is_an_ingest_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"bad\.html"):
        load_file(write(tmp_path / "bad.html", "<p>x</p><![foo[ bar ]]>"))


# --- PDF -------------------------------------------------------------------------------------

PAGE_1 = "<p>THÔNG BÁO TUYỂN SINH</p><p>Điểm chuẩn ngành Khoa học máy tính là 28.5 điểm.</p>"
PAGE_2 = "<p>Học phí dự kiến 40.000.000 đồng mỗi năm.</p><p>Hạn nộp hồ sơ: 15/6/2026.</p>"


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


# --- CSV -------------------------------------------------------------------------------------


def test_csv_sections_repeat_the_header_and_hold_at_most_25_rows(tmp_path: Path) -> None:
    rows = "\n".join(f"{i};75{i:05d};Ngành {i};26.{i}" for i in range(1, 61))
    path = write(tmp_path / "diem_chuan-2024.csv", f"STT;Mã ngành;Tên ngành;Điểm\n{rows}\n")

    doc = load_file(path)

    assert doc.title == "Diem chuan 2024"
    assert doc.meta["delimiter"] == ";"
    assert len(doc.sections) == 3
    bodies = []
    for section in doc.sections:
        lines = section.text.split("\n")
        assert lines[:2] == ["| STT | Mã ngành | Tên ngành | Điểm |", "| --- | --- | --- | --- |"]
        assert len(lines) - 2 <= 25
        bodies.extend(lines[2:])
    assert bodies[0] == "| 1 | 7500001 | Ngành 1 | 26.1 |"
    assert len(bodies) == 60


def test_csv_caption_rows_start_tables_with_their_own_header(tmp_path: Path) -> None:
    text = (
        "\ufeff2024,,,\nSTT,Ngành,Điểm,\n1,CNTT,27.1,\n2,KHMT,27.3,\n"
        '2023,,,\nSTT,Ngành,Điểm,\n1,"CNTT, chất lượng cao",26.9,\n'
    )
    doc = load_file(write(tmp_path / "scores.csv", text))

    assert [s.heading_path for s in doc.sections] == [("2024",), ("2023",)]
    assert doc.sections[1].text == (
        "| STT | Ngành | Điểm |\n| --- | --- | --- |\n| 1 | CNTT, chất lượng cao | 26.9 |"
    )


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
    expected = {".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".csv", ".docx"}
    assert expected == SUPPORTED_SUFFIXES


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Điểm chuẩn năm nay", "vi"),
        ("Cut-off scores for the Đại học Bách khoa " + "admission " * 100, "en"),
        ("", "en"),
    ],
)
def test_language_guess(text: str, language: str) -> None:
    assert document_language(text) == language


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


def test_markdown_sections_keep_heading_levels_and_runs_of_blank_lines(tmp_path: Path) -> None:
    doc = load_file(
        write(
            tmp_path / "trang.md",
            "# Tuyển sinh\n\n### Đối tượng\nDòng một.\n\n\n\nDòng hai.\n\n![](anh.png)\n\n"
            "Dòng ba.\n\n##### Hồ sơ\nPhiếu đăng ký.\n",
        )
    )
    first, second = doc.sections
    assert (first.heading_path, first.levels) == (("Đối tượng",), (3,))
    assert (second.heading_path, second.levels) == (("Đối tượng", "Hồ sơ"), (3, 5))
    # `text` collapses blank lines; `raw_text` keeps the run of three, and the dropped image
    # line leaves one blank line, not two.
    assert first.text == "Dòng một.\n\nDòng hai.\n\nDòng ba."
    assert first.raw_text == "Dòng một.\n\n\n\nDòng hai.\n\nDòng ba."
    # Neither takes part in equality: sections compare by what they say.
    assert first == Section(("Đối tượng",), first.text)


def test_html_sections_keep_heading_levels(tmp_path: Path) -> None:
    html = "<h1>Trang</h1><h2>Học phí</h2><p>Một.</p><h4>Học kỳ hè</h4><p>Hai.</p>"
    doc = load_file(write(tmp_path / "trang.html", html))
    assert [(s.heading_path, s.levels) for s in doc.sections] == [
        (("Học phí",), (2,)),
        (("Học phí", "Học kỳ hè"), (2, 4)),
    ]
