"""HTML files written to tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.errors import IngestError
from retrieval.loading import load_file
from retrieval.loading.document import Section
from tests.retrieval._support import write

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


def test_html_sections_keep_heading_levels(tmp_path: Path) -> None:
    html = "<h1>Trang</h1><h2>Học phí</h2><p>Một.</p><h4>Học kỳ hè</h4><p>Hai.</p>"
    doc = load_file(write(tmp_path / "trang.html", html))
    assert [(s.heading_path, s.levels) for s in doc.sections] == [
        (("Học phí",), (2,)),
        (("Học phí", "Học kỳ hè"), (2, 4)),
    ]
