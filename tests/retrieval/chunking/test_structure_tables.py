"""The structure chunker keeps tables, lists and the lines that head them whole: a row or an
item is never cut, every piece of a table repeats its header and the line naming it, and a chunk
never ends on a line that heads what follows."""

from __future__ import annotations

import pytest

from retrieval.chunking.base import ChunkSizes, approx_tokens
from retrieval.chunking.splitting import heads
from retrieval.chunking.structure import chunk_document
from retrieval.loading.document import Section
from tests.retrieval.chunking._support import SENTENCES, document, table

# --- tables and lists --------------------------------------------------------------------------


@pytest.mark.parametrize("caption", ["Điểm chuẩn 2024:", "1. CƠ SỞ ĐÀO TẠO PHÍA BẮC (mã BVH)"])
def test_table_rows_are_never_cut_and_every_piece_repeats_the_header_and_caption(
    caption: str,
) -> None:
    header, rows = table(80)
    doc = document(Section(("Điểm chuẩn",), f"{caption}\n" + "\n".join([*header, *rows])))

    chunks = chunk_document(doc)

    assert len(chunks) > 2
    seen: list[str] = []
    for chunk in chunks:
        lines = chunk.text.split("\n")
        assert lines[0] == caption  # whose cut-offs the rows are, in every piece
        body = lines[1:]
        assert body[:2] == header
        assert all(line in rows for line in body[2:])
        seen.extend(body[2:])
        assert chunk.token_count <= 300
    assert seen == rows


def test_a_sentence_before_a_table_is_not_repeated_with_its_pieces() -> None:
    header, rows = table(80)
    lead = "Thí sinh xem điểm chuẩn của từng ngành trong bảng dưới đây."
    chunks = chunk_document(document(Section((), f"{lead}\n" + "\n".join([*header, *rows]))))

    assert len(chunks) > 2
    assert sum(lead in c.text for c in chunks) == 1
    assert all(c.text.split("\n")[:2] == header for c in chunks[1:])


def test_the_line_naming_a_table_stays_with_it() -> None:
    header, rows = table(10)
    caption = "1. CƠ SỞ ĐÀO TẠO PHÍA BẮC (mã BVH)"
    paragraph = " ".join(SENTENCES[:5])
    grid = "\n".join([*header, *rows])
    sizes = ChunkSizes(target_tokens=300, max_tokens=450)
    # Two chunks either way: ending the first on the caption would be the more even pair.
    assert approx_tokens(f"{paragraph}\n\n{caption}") <= 300
    assert approx_tokens(f"{caption}\n{grid}") <= 300
    assert approx_tokens(f"{paragraph}\n\n{caption}\n{grid}") > 300
    assert approx_tokens(paragraph) < approx_tokens(grid)

    # A blank line under the caption: cutting there is no weaker than above it.
    chunks = chunk_document(
        document(Section((), f"{paragraph}\n\n{caption}\n\n{grid}")), sizes=sizes
    )

    assert [c.text for c in chunks] == [paragraph, f"{caption}\n\n{grid}"]


def test_scraped_table_with_an_empty_first_row_repeats_the_real_header() -> None:
    header, rows = table(80, empty_first_row=True)

    chunks = chunk_document(document(Section((), "\n".join([*header, *rows]))))

    assert len(chunks) > 2
    assert all(c.text.split("\n")[:3] == header for c in chunks)


def test_list_items_are_never_cut() -> None:
    items = [
        f"- Thí sinh thuộc đối tượng {i} được cộng {i % 3}.5 điểm ưu tiên khu vực."
        for i in range(90)
    ]

    chunks = chunk_document(document(Section(("Ưu tiên",), "Đối tượng:\n" + "\n".join(items))))

    assert len(chunks) > 2
    lines = [line for c in chunks for line in c.text.split("\n")]
    assert lines == ["Đối tượng:", *items]


@pytest.mark.parametrize(
    "head", ["**1. Hồ sơ tuyển sinh gồm:**", "Hồ sơ gồm các giấy tờ sau:", "**VII. HỒ SƠ**"]
)
def test_a_line_that_heads_a_list_stays_with_it(head: str) -> None:
    paragraph = " ".join(SENTENCES[:5])
    items = [
        f"- 0{i} Bản sao hợp lệ giấy tờ số {i} của thí sinh, có công chứng." for i in range(12)
    ]
    text = f"{paragraph}\n\n{head}\n\n" + "\n".join(items)
    sizes = ChunkSizes(target_tokens=300, max_tokens=450)
    # Two chunks either way; the more even pair would end the first one with the head.
    assert approx_tokens(paragraph) < approx_tokens("\n".join(items)) < 300
    assert approx_tokens(f"{paragraph}\n\n{head}\n\n" + "\n".join(items)) > 300

    chunks = chunk_document(document(Section(("Hồ sơ",), text)), sizes=sizes)

    assert [c.text for c in chunks] == [paragraph, f"{head}\n\n" + "\n".join(items)]


@pytest.mark.parametrize(
    ("text", "weight"),
    [
        ("Hồ sơ tuyển sinh gồm:", 2),
        ("**1. Hồ sơ tuyển sinh gồm:**", 2),
        ("Đoạn đầu.\nCụ thể như sau:", 2),
        ("**VII. HỒ SƠ TUYỂN SINH**", 1),
        ("Điện thoại: 028 3725 2002", 0),
        ("**Lưu ý** hồ sơ nộp trực tiếp", 0),
        ("Hồ sơ tuyển sinh gồm:\n- Phiếu đăng ký", 0),
    ],
)
def test_what_a_chunk_ending_on_a_line_breaks(text: str, weight: int) -> None:
    assert heads(text) == weight
