"""Markdown and plain-text files written to tmp_path."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from retrieval.loading import load_file
from retrieval.loading.document import Section
from tests.retrieval._support import write

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
