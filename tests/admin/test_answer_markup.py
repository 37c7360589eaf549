"""An answer's Markdown as HTML for staff pages: formatting kept, everything unsafe escaped."""

from __future__ import annotations

from admin.answer_markup import answer_html, excerpt_html


def test_bold_lists_and_tables_are_rendered() -> None:
    html = answer_html(
        "**Học phí**:\n- chuẩn\n- CLC\n\n| Ngành | Mức |\n|---|---|\n| KHMT | 32,5 |"
    )
    assert "<strong>Học phí</strong>" in html
    assert "<li>chuẩn</li>" in html
    assert "<th>Ngành</th>" in html
    assert "<td>32,5</td>" in html
    assert "**" not in html
    assert "|---|" not in html


def test_raw_html_is_text_and_only_web_links_are_links() -> None:
    html = answer_html(
        '<script>alert(1)</script> <b onclick="x()">b</b> [a](javascript:alert(2)) '
        "[d](data:text/html,x) [f](file:///etc/passwd) ![i](https://e.vn/i.png) "
        "[ok](https://shut.example.vn/hoc-phi)"
    )
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert "<b " not in html
    assert 'href="javascript' not in html
    assert 'href="data' not in html
    assert 'href="file' not in html
    assert "<img" not in html
    assert (
        '<a href="https://shut.example.vn/hoc-phi" rel="noopener noreferrer" target="_blank">ok</a>'
    ) in html


def test_a_sources_block_keeps_its_lines_and_links_its_addresses() -> None:
    html = answer_html(
        "Theo tài liệu:\n- 32,5 triệu [1]\n\nNguồn:\n"
        "[1] Đề án 2026 — https://shut.example.vn/de-an?a=1&b=2, trang 3\n[2] hoc-phi.pdf"
    )
    assert "Nguồn:<br />" in html
    assert '<a href="https://shut.example.vn/de-an?a=1&amp;b=2"' in html
    assert ">https://shut.example.vn/de-an?a=1&amp;b=2</a>, trang 3" in html
    assert "[2] hoc-phi.pdf" in html


def test_a_passages_excerpt_keeps_whole_lines_so_a_table_stays_a_table() -> None:
    passage = (
        "Bảng học phí\n| Chương trình | Học phí |\n|---|---|\n| Chuẩn | 32.500.000 đồng |\n"
        "| <script>x()</script> | 36.000.000 đồng |\n| Chất lượng cao | 45.000.000 đồng |"
    )
    cut = passage.index("| Chất lượng cao")
    html = excerpt_html(passage, cut + 5)  # the last row would be cut in its middle
    assert "<td>Chuẩn</td>" in html
    assert "<td>&lt;script&gt;x()&lt;/script&gt;</td>" in html
    assert "Chất lượng cao" not in html
    assert "|---|" not in html
    assert html.rstrip().endswith("<p>…</p>")
    assert excerpt_html("Ngắn gọn.", 400) == answer_html("Ngắn gọn.")
    assert excerpt_html("x" * 50, 10) == "<p>xxxxxxxxxx</p>\n<p>…</p>\n"
