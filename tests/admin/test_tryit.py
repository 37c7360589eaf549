""" "Try it" over real HTTP: which tier answers and why, on the demo knowledge base."""

from __future__ import annotations

import json
import re

from bot.knowledge.demo import demo_kb_dir
from tests.admin._support import AdminBrowser

FAQ = [json.loads(line) for line in (demo_kb_dir() / "faq.jsonl").read_text("utf-8").splitlines()]


async def test_a_faq_question_shows_the_matches_and_the_verbatim_reply(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page(f"/admin/try?q={FAQ[1]['question']}")
    assert 'data-tier="faq"' in page
    assert FAQ[1]["answer"] in page
    faq_table = page.split('data-testid="try-faq"')[1].split("</table>")[0]
    assert "được chọn" in faq_table  # the accepted match, with its similarity
    assert re.search(r'class="score">0\.\d{4}<', faq_table)
    assert "t_faq = 0." in page


async def test_a_look_alike_question_shows_the_guard_refusing_and_the_passages(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page("/admin/try?q=Chỉ tiêu ngành Kỹ thuật Máy tính năm 2026 là bao nhiêu?")
    assert 'data-tier="documents"' in page
    faq_table = page.split('data-testid="try-faq"')[1].split("</table>")[0]
    assert "Khoa học Máy tính" in faq_table
    assert "không chọn" in faq_table
    chunks = page.split('data-testid="try-chunks"')[1].split("</table>")[0]
    assert "Kỹ thuật Máy tính" in chunks
    assert "<td>Có</td>" in chunks  # at least one passage passed t_doc and was used


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
