""" "Try it" over real HTTP: which tier answers and why, on the demo knowledge base; the why in
Vietnamese with the figures folded; the answer's Markdown rendered safely."""

from __future__ import annotations

import json
import re

from bot.knowledge.demo import demo_kb_dir
from tests.admin._support import AdminBrowser

FAQ = [json.loads(line) for line in (demo_kb_dir() / "faq.jsonl").read_text("utf-8").splitlines()]


def section(page: str, testid: str, end: str = "</table>") -> str:
    return page.split(f'data-testid="{testid}"')[1].split(end)[0]


def technical(page: str) -> str:
    """The "Chi tiết kỹ thuật" block of the page."""
    return section(page, "technical", "</details>")


async def test_a_faq_question_shows_the_matches_and_the_verbatim_reply(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page(f"/admin/try?q={FAQ[1]['question']}")
    assert 'data-tier="faq"' in page
    assert FAQ[1]["answer"] in page
    faq_table = section(page, "try-faq")
    assert "được chọn" in faq_table
    reason = section(page, "try-reason", "</p>")
    assert re.search(r"Trả lời từ câu hỏi thường gặp #\d+", reason), reason
    # the entry that answered, linked by its question
    assert re.search(
        rf'<a href="/admin/faq/\d+">#\d+ · {re.escape(FAQ[1]["question"])}</a>',
        section(page, "try-sources", "</ul>"),
    )
    folded = technical(page)
    assert faq_table in folded  # the candidates and their figures are folded
    assert "<summary>Chi tiết kỹ thuật</summary>" in folded
    assert re.search(r'class="score">0\.\d{4}<', folded)  # the accepted match's similarity
    assert re.search(r"độ tin cậy câu hỏi thường gặp = [01]\.\d{3}", folded)  # this FAQ's threshold
    assert "t_doc = 0." in folded
    assert "t_doc" not in page.replace(folded, "")


async def test_a_look_alike_question_says_in_vietnamese_why_the_entry_was_not_taken(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page("/admin/try?q=Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?")
    assert 'data-tier="documents"' in page
    faq_table = section(page, "try-faq")
    assert "Khoa học Máy tính" in faq_table
    assert "không chọn" in faq_table
    # the guard's conflict, said from its structure: the category's label and both values
    assert "câu hỏi nói về Kỹ thuật máy tính (ngành), mục này nói về Khoa học máy tính" in (
        faq_table
    )
    assert faq_table in technical(page)  # the guard's reasoning is folded
    plain = page.replace(technical(page), "")
    assert "mục này nói về" not in plain
    assert "near-miss guard" not in plain  # its English note, beside it in the table
    reason = section(page, "try-reason", "</p>")
    assert "Trả lời từ tài liệu" in reason, reason
    assert "chunks" not in reason
    assert "t_doc" not in reason
    assert "giá trị trong bảng số liệu của trường" in reason  # the quota table's value
    chunks = section(page, "try-chunks")
    assert "Kỹ thuật Máy tính" in chunks
    assert "/tmp/" not in chunks
    assert ".md<" not in chunks
    assert "facts table: chỉ tiêu" in technical(page)  # the English reason, folded


async def test_a_reply_in_markdown_is_rendered_and_nothing_unsafe_gets_through(
    editor: AdminBrowser,
) -> None:
    question = "Bãi gửi xe máy của trường mở cửa lúc mấy giờ?"
    answer = (
        "Bãi xe **mở cửa từ 6 giờ** đến 22 giờ:\n\n"
        "| Khu | Giờ |\n|---|---|\n| A | 6–22 |\n\n"
        "- [Bản đồ](https://shut.example.vn/ban-do)\n"
        "- [lừa](javascript:alert(1)) <script>alert(2)</script> <img src=x onerror=alert(3)>"
    )
    response = await editor.post(
        "/admin/faq/new",
        {"question": question, "answer": answer, "language": "vi", "status": "published"},
    )
    assert response.status == 303
    page = await editor.page(f"/admin/try?q={question}")
    shown = section(page, "try-answer", "</div>")
    assert "<strong>mở cửa từ 6 giờ</strong>" in shown
    assert "<table>" in shown
    assert "<td>6–22</td>" in shown
    assert "|---|" not in shown
    assert "**" not in shown
    assert (
        '<a href="https://shut.example.vn/ban-do" rel="noopener noreferrer" target="_blank">'
        "Bản đồ</a>"
    ) in shown
    assert "javascript:" not in shown.replace("[lừa](javascript:alert(1))", "")
    assert 'href="javascript' not in shown
    assert "<script>" not in shown
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in shown
    assert "<img" not in shown
    assert "&lt;img" in shown


async def test_try_it_in_english_and_with_markup_in_the_question(viewer: AdminBrowser) -> None:
    await viewer.get("/admin/lang/en")
    page = await viewer.page("/admin/try?q=<script>alert(1)</script> học phí")
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Answered by:" in page
    assert "Nearest FAQ entries" in page
    empty = await viewer.page("/admin/try")
    assert 'data-testid="try-result"' not in empty


async def test_try_it_shows_how_an_unaccented_two_part_question_was_read(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page("/admin/try?q=hoc phi chuong trinh chuan bao nhieu, ktx o dau")
    restored = page.split('data-testid="try-restored"')[1].split("</p>")[0]
    assert "học phí chương trình chuẩn bao nhiêu, ktx ở đâu" in restored
    parts = page.split('data-testid="try-parts"')[1].split("</p>")[0]
    assert "2 ý" in parts
    assert "học phí chương trình chuẩn bao nhiêu · ktx ở đâu" in parts
