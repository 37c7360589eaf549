"""The plain-words check itself (tests/admin/_engine_talk.py): it finds English diagnostics,
the guard's reasoning and raw figures outside "Chi tiết kỹ thuật" as the old pages showed them,
a Markdown table's pipes anywhere, and nothing in plain Vietnamese.
"""

from __future__ import annotations

from tests.admin._engine_talk import TECHNICAL, engine_talk_on, english_on


def test_the_check_finds_english_outside_the_technical_block_only() -> None:
    shown = "<p>Vì sao: 5 chunks passed t_doc; answered extractive</p>"
    folded = f"<details><summary>{TECHNICAL}</summary><p>similarity 0.844 below t_faq</p></details>"
    assert len(english_on(shown)) == 4
    assert english_on(folded + "<p>Trả lời từ tài liệu</p><script>var below=1</script>") == []
    other = "<details><summary>Nguồn</summary>similarity 0.8</details>"
    assert english_on(other) == ["Nguồn similarity 0.8"]


def test_the_check_finds_the_guards_reasoning_and_raw_figures_as_the_old_pages_showed_them() -> (
    None
):
    # The conversation view and Try it before 4/4 said these under a reply and in the FAQ table.
    old = [
        "<p>Mục #25: câu hỏi hỏi về học phí nhưng mục này không nói về học phí.</p>",
        "<p>Mục #2: câu hỏi nói về Kỹ thuật máy tính (ngành), mục này nói về Khoa học máy tính</p>",
        "<small>Mục #11 chỉ dành cho chất lượng cao (hệ đào tạo), câu hỏi không nói tới</small>",
        "<p>Mục #10 gần nhất nhưng tuvan chưa đủ chắc chắn để trả lời nguyên văn.</p>",
        "<p>Đoạn đầu tiên là câu trả lời của mục #10.</p>",
        "<p>Điểm: 0.919 (ngưỡng 0.840)</p>",
        "<small>| Ngành | Mức |\n|---|---|\n| KHMT | 32,5 |</small>",
    ]
    for snippet in old:
        assert engine_talk_on(snippet), snippet
    folded = (
        f"<details class='technical'><summary>{TECHNICAL}</summary>{''.join(old[:6])}</details>"
    )
    plain = (
        "<p>Trả lời từ câu hỏi thường gặp #1 (hỏi đúng một cách hỏi đã lưu).</p>"
        "<p>Câu hỏi nói về 2024 (năm) nhưng tài liệu tìm được không nói về điều này.</p>"
        "<p>Học phí 32.500.000 đồng, điểm chuẩn 26,85; độ tin cậy 62%.</p>"
        "<table><tr><td>KHMT</td></tr></table><textarea>| a |\n|---|</textarea>"
    )
    assert engine_talk_on(folded + plain) == []
    # a Markdown table is no table even under "Chi tiết kỹ thuật" (Try it's passages)
    assert engine_talk_on(f"<details><summary>{TECHNICAL}</summary>{old[-1]}</details>")
