"""The `semantic` chunker: boundaries where the topic changes, with the real default embedder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.answer.parts import AnswererParts
from retrieval.chunking import chunk_for, draft_chunks
from retrieval.chunking.base import ChunkSizes, approx_tokens
from retrieval.chunking.semantic import Vectors, chunk_semantic, semantic_pieces
from retrieval.loading import load_file
from retrieval.loading.document import LoadedDocument, Section

TUITION = [
    "Học phí chương trình chuẩn năm học 2025-2026 là 32 triệu đồng mỗi năm.",
    "Sinh viên đóng học phí theo từng học kỳ qua tài khoản ngân hàng của trường.",
    "Hạn chót nộp học phí học kỳ một là ngày 15 tháng 10.",
    "Sinh viên nộp học phí trễ hạn sẽ bị khóa tài khoản đăng ký môn học.",
    "Học phí chương trình tiên tiến cao hơn chương trình chuẩn khoảng 40 phần trăm.",
    "Sinh viên thuộc hộ nghèo được miễn giảm học phí theo quy định của Nhà nước.",
    "Đơn xin miễn giảm học phí nộp tại Phòng Kế hoạch Tài chính trong tháng đầu học kỳ.",
    "Mức học phí có thể tăng không quá 10 phần trăm mỗi năm theo lộ trình.",
]
FOOTBALL = [
    "Đội bóng đá của trường vừa vô địch giải bóng đá sinh viên toàn thành phố.",
    "Tiền đạo số 9 ghi ba bàn thắng trong trận chung kết trên sân vận động Thống Nhất.",
    "Huấn luyện viên cho cả đội tập sút phạt đền mỗi chiều thứ Năm.",
    "Thủ môn cản phá hai quả phạt đền ở loạt luân lưu cuối trận.",
    "Cổ động viên mặc áo xanh hát vang suốt chín mươi phút thi đấu.",
    "Trận bán kết diễn ra dưới mưa lớn nên bóng lăn rất chậm trên mặt sân.",
    "Đội trưởng nâng cúp vô địch trong tiếng reo hò của các cầu thủ dự bị.",
    "Mùa giải tới đội bóng sẽ tham dự giải bóng đá sinh viên châu Á.",
]


def document(*sections: Section) -> LoadedDocument:
    return LoadedDocument("tin-tuc.md", "Tin tức", None, "vi", "0" * 64, sections)


def test_the_boundary_falls_between_two_topics(parts: AnswererParts) -> None:
    # One paragraph, no heading or blank line between the topics: only meaning separates them.
    doc = document(Section((), " ".join(TUITION + FOOTBALL)))
    drafts = chunk_for(
        doc,
        "semantic",
        count_tokens=parts.embedder.count_tokens,
        embed=parts.embedder.embed_passages,
    )
    assert [d.text for d in drafts] == [" ".join(TUITION), " ".join(FOOTBALL)]
    assert all(d.token_count == parts.embedder.count_tokens(d.text) for d in drafts)


def test_topics_in_the_other_order_are_cut_at_the_same_place(parts: AnswererParts) -> None:
    # The last football sentence ("...giải bóng đá sinh viên châu Á") is left out: e5-small
    # finds it nearly as far from the match report as from the fees.
    doc = document(Section((), "\n".join(FOOTBALL[:7] + TUITION[:6])))
    drafts = chunk_semantic(
        doc, embed=parts.embedder.embed_passages, count_tokens=parts.embedder.count_tokens
    )
    assert [d.text for d in drafts] == ["\n".join(FOOTBALL[:7]), "\n".join(TUITION[:6])]


def test_sizes_bound_the_chunks_of_one_long_topic(parts: AnswererParts) -> None:
    text = "\n".join(
        f"{sentence} Năm {year}." for year in range(2010, 2022) for sentence in TUITION
    )
    drafts = chunk_semantic(
        document(Section(("Học phí",), text)),
        embed=parts.embedder.embed_passages,
        count_tokens=approx_tokens,
        sizes=ChunkSizes(target_tokens=280, max_tokens=300),
    )
    assert len(drafts) > 4
    assert all(93 <= d.token_count <= 300 for d in drafts)
    assert all(d.heading_path == ("Học phí",) for d in drafts)
    # No overlap, nothing lost (a cut between two sentences of a line drops only a space).
    assert " ".join(" ".join(d.text for d in drafts).split()) == " ".join(text.split())


def test_pages_always_part_and_heading_paths_are_shared(parts: AnswererParts) -> None:
    doc = document(
        Section(("Tuyển sinh", "Học phí"), " ".join(TUITION[:3]), 1),
        Section(("Tuyển sinh", "Miễn giảm"), " ".join(TUITION[5:7]), 1),
        Section(("Thể thao",), " ".join(FOOTBALL[:2]), 2),
    )
    drafts = chunk_semantic(
        doc,
        embed=parts.embedder.embed_passages,
        count_tokens=approx_tokens,
        sizes=ChunkSizes(target_tokens=280),
    )
    assert [(d.page, d.heading_path) for d in drafts] == [(1, ("Tuyển sinh",)), (2, ("Thể thao",))]
    # Merged sections keep their own headings as lines.
    assert drafts[0].text.startswith("Học phí\n")
    assert "\n\nMiễn giảm\n" in drafts[0].text


def test_table_rows_and_list_items_stay_whole(tmp_path: Path, parts: AnswererParts) -> None:
    rows = [f"| {i} | 74801{i:02d} | Ngành số {i} | {200 + i} |" for i in range(30)]
    items = [f"- {sentence} {sentence}" for sentence in FOOTBALL]
    body = "\n".join(
        ["| STT | Mã ngành | Tên ngành | Chỉ tiêu |", "| --- | --- | --- | --- |", *rows]
    )
    (tmp_path / "chi-tieu.md").write_text(
        f"# Chỉ tiêu\n\n{body}\n\n" + "\n".join(items) + "\n", encoding="utf-8"
    )
    doc = load_file(tmp_path / "chi-tieu.md")
    pieces = semantic_pieces(doc, count_tokens=approx_tokens)
    assert [p.text for p in pieces][-len(items) :] == items
    drafts = chunk_semantic(
        doc,
        embed=parts.embedder.embed_passages,
        count_tokens=approx_tokens,
        sizes=ChunkSizes(target_tokens=150, max_tokens=150),
    )
    assert len(drafts) > 2
    lines = [line for d in drafts for line in d.text.split("\n")]
    assert all(row in lines for row in rows)
    assert all(item in lines for item in items)
    for draft in drafts:
        if draft.text.startswith("| "):
            assert draft.text.startswith("| STT | Mã ngành |")  # a table piece repeats its header


async def test_the_indexer_path_embeds_off_the_loop_with_the_same_result(
    parts: AnswererParts,
) -> None:
    doc = document(Section((), " ".join(TUITION + FOOTBALL)))
    drafts = await draft_chunks(
        doc, "semantic", parts.embedder, sizes=ChunkSizes(target_tokens=280, max_tokens=400)
    )
    assert drafts == chunk_for(
        doc,
        "semantic",
        count_tokens=parts.embedder.count_tokens,
        embed=parts.embedder.embed_passages,
    )


def test_the_semantic_chunker_needs_an_embedder() -> None:
    with pytest.raises(ValueError, match="needs an embedder"):
        chunk_for(document(Section((), TUITION[0])), "semantic")


def test_an_empty_document_embeds_nothing(parts: AnswererParts) -> None:
    calls: list[int] = []

    def embed(texts: Sequence[str]) -> Vectors:
        calls.append(1)
        return parts.embedder.embed_passages(texts)

    assert chunk_semantic(document(), embed=embed) == []
    assert calls == []
