"""Regulations chunked by Chương / Mục / Điều / Khoản."""

from __future__ import annotations

import json
import re
from typing import get_args

import pytest
from pydantic import ValidationError

from bot.core.settings import IngestSettings, Settings
from bot.core.types import CHUNKER_MODES
from retrieval.chunking import AUTO_CHUNKER, chunk_for, resolve_chunker
from retrieval.chunking.base import ChunkSizes, approx_tokens
from retrieval.chunking.legal import chunk_regulation, is_regulation
from retrieval.chunking.markdown import chunk_markdown
from retrieval.chunking.structure import chunk_document
from retrieval.loading import load_file
from retrieval.loading.document import LoadedDocument, Section
from tests.retrieval._support import DATASETS

LONG_CLAUSES = "\n".join(
    f"{n}. Khoản {n} quy định thí sinh phải nộp hồ sơ đăng ký xét tuyển đúng hạn. "
    + "Hồ sơ gồm phiếu đăng ký, bản sao học bạ và giấy chứng nhận ưu tiên nếu có. " * 6
    + f"\na) Điểm a của khoản {n}.\nb) Điểm b của khoản {n}."
    for n in range(1, 6)
)
REGULATION = f"""BỘ GIÁO DỤC VÀ ĐÀO TẠO
QUY CHẾ TUYỂN SINH ĐẠI HỌC
Căn cứ Luật Giáo dục đại học ngày 18 tháng 6 năm 2012.

CHƯƠNG I
QUY ĐỊNH CHUNG
Điều 1. Phạm vi điều chỉnh và đối tượng áp dụng
1. Quy chế này quy định về tuyển sinh trình độ đại học.
2. Quy chế này áp dụng đối với các cơ sở đào tạo.
Điều 2: Giải thích từ ngữ
Trong Quy chế này, các từ ngữ dưới đây được hiểu như sau.

Chương II. TỔ CHỨC TUYỂN SINH
Mục 1. Đăng ký xét tuyển
Điều 3. Hồ sơ đăng ký
{LONG_CLAUSES}
Điều 4. Lệ phí
Thực hiện theo Điều 20 của Quy chế này.
Mục 2. Xét tuyển
Điều 5. Nguyên tắc xét tuyển
Xét theo điểm từ cao xuống thấp.
Điều 6. Hiệu lực thi hành
Quy chế này có hiệu lực từ ngày ký.
"""


def regulation(text: str = REGULATION, page: int | None = None) -> LoadedDocument:
    return LoadedDocument("qc.txt", "Quy chế", None, "vi", "", (Section((), text, page),))


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def test_one_chunk_per_article_with_number_and_title_in_the_heading_path() -> None:
    drafts = chunk_regulation(regulation(), count_tokens=approx_tokens)

    paths = [d.heading_path for d in drafts]
    assert paths[0] == ()
    assert "Căn cứ Luật Giáo dục" in drafts[0].text
    assert paths[1] == (
        "Chương I. Quy định chung",
        "Điều 1. Phạm vi điều chỉnh và đối tượng áp dụng",
    )
    assert paths[2] == ("Chương I. Quy định chung", "Điều 2. Giải thích từ ngữ")
    article_3 = (
        "Chương II. Tổ chức tuyển sinh",
        "Mục 1. Đăng ký xét tuyển",
        "Điều 3. Hồ sơ đăng ký",
    )
    assert paths[-3] == (
        "Chương II. Tổ chức tuyển sinh",
        "Mục 1. Đăng ký xét tuyển",
        "Điều 4. Lệ phí",
    )
    assert paths[-1][-2:] == ("Mục 2. Xét tuyển", "Điều 6. Hiệu lực thi hành")
    assert drafts[1].text.splitlines()[-1] == "2. Quy chế này áp dụng đối với các cơ sở đào tạo."
    assert paths.count(article_3) > 1
    assert [d.ordinal for d in drafts] == list(range(len(drafts)))


def test_long_article_is_split_at_clause_borders_within_max_tokens() -> None:
    drafts = chunk_regulation(
        regulation(),
        count_tokens=approx_tokens,
        sizes=ChunkSizes(target_tokens=280, max_tokens=400),
    )

    pieces = [d for d in drafts if d.heading_path[-1:] == ("Điều 3. Hồ sơ đăng ký",)]
    assert len(pieces) >= 2
    # the chapter and part lines open the first chunk under them
    assert pieces[0].text.splitlines()[:3] == [
        "Chương II. TỔ CHỨC TUYỂN SINH",
        "Mục 1. Đăng ký xét tuyển",
        "Điều 3. Hồ sơ đăng ký",
    ]
    for piece in pieces:
        assert piece.token_count == approx_tokens(piece.text) <= 400
        first = piece.text.splitlines()[0]
        assert first.startswith("Chương II") or re.match(r"\d\. Khoản", first)
        # points a) b) stay with their clause
        assert not piece.text.splitlines()[0].startswith(("a)", "b)"))
    assert all(d.token_count <= 400 for d in drafts)


def test_every_word_of_the_source_is_in_the_chunks() -> None:
    drafts = chunk_regulation(regulation(), count_tokens=approx_tokens)

    chunked = {w for d in drafts for w in words(d.text)}
    assert set(words(REGULATION)) <= chunked
    assert sum(d.text.count("Khoản 3 quy định") for d in drafts) == 1


def test_very_long_clause_falls_back_to_sentences_with_overlap() -> None:
    sentences = " ".join(f"Câu số {n} nói về hồ sơ xét tuyển đại học." for n in range(80))
    doc = regulation(f"Điều 1. Hồ sơ\n1. {sentences}\nĐiều 2. A\nB.\nĐiều 3. C\nD.", page=4)

    drafts = chunk_regulation(
        doc, count_tokens=approx_tokens, sizes=ChunkSizes(target_tokens=100, max_tokens=150)
    )

    pieces = [d for d in drafts if d.heading_path == ("Điều 1. Hồ sơ",)]
    assert len(pieces) > 2
    assert all(d.token_count <= 150 and d.page == 4 for d in pieces)
    last_sentence = pieces[0].text.rsplit("Câu số", 1)[1]
    assert last_sentence in pieces[1].text  # one sentence of overlap


def test_pages_follow_the_sections_an_article_runs_over() -> None:
    long_clauses = LONG_CLAUSES.split("\n")
    half = len(long_clauses) // 2
    doc = LoadedDocument(
        "qc.pdf",
        "Quy chế",
        None,
        "vi",
        "",
        (
            Section(
                (), "Lời nói đầu của quy chế.\nĐiều 1. Hồ sơ\n" + "\n".join(long_clauses[:half]), 1
            ),
            Section((), "\n".join(long_clauses[half:]) + "\nĐiều 2. Lệ phí\nMiễn phí.", 2),
        ),
    )

    drafts = chunk_regulation(doc, count_tokens=approx_tokens)

    assert drafts[0].page == 1
    assert drafts[1].page == 1
    assert drafts[-1].page == 2
    assert drafts[-1].heading_path == ("Điều 2. Lệ phí",)
    assert [d.page for d in drafts] == sorted(d.page or 0 for d in drafts)
    assert {d.page for d in drafts if d.heading_path == ("Điều 1. Hồ sơ",)} == {1, 2}


def test_headings_in_markdown_heading_paths_count_too() -> None:
    doc = LoadedDocument(
        "qc.md",
        "Quy chế",
        None,
        "vi",
        "",
        (
            Section(("Chương I. Quy định chung", "Điều 1. Phạm vi"), "Quy chế này quy định."),
            Section(("Chương I. Quy định chung", "Điều 2. Đối tượng"), "Áp dụng cho thí sinh."),
            Section(("Chương II", "Điều 3. Hiệu lực"), "Có hiệu lực từ ngày ký."),
        ),
    )

    drafts = chunk_regulation(doc)

    assert is_regulation(doc)
    assert [(d.heading_path, d.text) for d in drafts] == [
        (
            ("Chương I. Quy định chung", "Điều 1. Phạm vi"),
            "Chương I. Quy định chung\nĐiều 1. Phạm vi\nQuy chế này quy định.",
        ),
        (
            ("Chương I. Quy định chung", "Điều 2. Đối tượng"),
            "Điều 2. Đối tượng\nÁp dụng cho thí sinh.",
        ),
        (("Chương II", "Điều 3. Hiệu lực"), "Chương II\nĐiều 3. Hiệu lực\nCó hiệu lực từ ngày ký."),
    ]


def test_what_follows_the_recipients_block_is_not_in_the_last_article() -> None:
    # A decision (three articles, "Nơi nhận:") with its attachment on the following pages, as
    # PTIT publishes "Quyết định phê duyệt Thông tin tuyển sinh".
    decision = (
        "QUYẾT ĐỊNH\nĐiều 1. Nay phê duyệt Thông tin tuyển sinh năm 2025 (chi tiết kèm theo).\n"
        "Điều 2. Quyết định có hiệu lực thi hành kể từ ngày ký.\n"
        "Điều 3. Chánh văn phòng và Trưởng các đơn vị chịu trách nhiệm thi hành Quyết định."
    )
    closing = "Nơi nhận:\n- Như Điều 3;\n- Lưu VT."
    attachment = [
        "THÔNG TIN TUYỂN SINH NĂM 2025\nI. THÔNG TIN CHUNG\nMã trường: BVH và BVS.",
        "3. Ngưỡng đầu vào\nTổng điểm ba môn đạt từ 15.0 điểm trở lên.",
    ]
    doc = LoadedDocument(
        "793qd.pdf",
        "Quyết định",
        None,
        "vi",
        "",
        (
            Section((), decision, 1),
            Section((), closing, 2),
            Section((), attachment[0], 3),
            Section((), attachment[1], 4),
        ),
    )
    assert is_regulation(doc)
    drafts = chunk_regulation(doc, count_tokens=approx_tokens)
    assert [(d.page, d.heading_path[:1]) for d in drafts] == [
        (1, ()),  # "QUYẾT ĐỊNH"
        (1, ("Điều 1. Nay phê duyệt Thông tin tuyển sinh năm 2025 (chi tiết kèm theo)",)),
        (1, ("Điều 2. Quyết định có hiệu lực thi hành kể từ ngày ký",)),
        (1, ("Điều 3. Chánh văn phòng và Trưởng các đơn vị chịu trách nhiệm thi hành Quyết định",)),
        (2, ()),
        (3, ()),
        (4, ()),
    ]
    assert [d.text for d in drafts[-3:]] == [closing, *attachment]


@pytest.mark.parametrize(
    "line",
    [
        "Thực hiện theo Điều 20 của Quy chế.",
        "điều 20 của Quy chế tuyển sinh",
        "2. CHƯƠNG TRÌNH HỖ TRỢ HỌC BỔNG",
        "ĐIỀU KIỆN ĐỂ THAM GIA CHƯƠNG TRÌNH:",
        "Mục tiêu đào tạo",
    ],
)
def test_references_and_look_alikes_are_not_headings(line: str) -> None:
    doc = regulation("\n".join([line] * 5))

    assert not is_regulation(doc)
    assert [d.heading_path for d in chunk_regulation(doc)] == [()]


def test_chunk_for_picks_the_chunker() -> None:
    doc = regulation()
    page = LoadedDocument("p.md", "Tin", None, "vi", "", (Section(("A",), "Thông báo học bổng."),))

    assert chunk_for(doc, "auto") == chunk_regulation(doc)
    assert chunk_for(doc, "legal") == chunk_regulation(doc)
    assert chunk_for(doc, "structure") == chunk_document(
        doc, sizes=ChunkSizes(target_tokens=280, max_tokens=400)
    )
    assert chunk_for(doc, "markdown") == chunk_markdown(
        doc, sizes=ChunkSizes(target_tokens=280, max_tokens=400)
    )
    assert chunk_for(page, "auto") == chunk_for(page, AUTO_CHUNKER)
    assert [resolve_chunker(d, "auto") for d in (doc, page)] == ["legal", AUTO_CHUNKER]
    assert [resolve_chunker(page, m) for m in CHUNKER_MODES if m != "auto"] == [
        "structure",
        "markdown",
        "legal",
        "semantic",
    ]
    with pytest.raises(ValueError, match="unknown chunker"):
        chunk_for(doc, "fancy")  # type: ignore[arg-type]


def test_admissions_web_pages_are_not_regulations() -> None:
    folder = DATASETS / "uit-admissions" / "corpus"
    if not folder.is_dir():
        pytest.skip(f"shared dataset not found at {folder}")
    pages = sorted(folder.glob("*.md"))

    assert pages
    assert not [p.name for p in pages if is_regulation(load_file(p))]


def test_alqac_articles_chunk_with_the_article_in_the_heading_path() -> None:
    corpus = DATASETS / "alqac" / "corpus.jsonl"
    if not corpus.is_file():
        pytest.skip(f"shared dataset not found at {corpus}")
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()[:40]]
    # The corpus stores each article's title as its first line; the law prints "Điều N. Title".
    text = "\n\n".join(f"Điều {n}. {row['text']}" for n, row in enumerate(rows, start=1))
    doc = regulation(text)

    drafts = chunk_regulation(doc, count_tokens=approx_tokens)

    assert is_regulation(doc)
    assert all(d.heading_path and d.heading_path[-1].startswith("Điều ") for d in drafts)
    assert {d.heading_path[-1] for d in drafts} == {
        f"Điều {n}. {row['title']}".rstrip(" .") for n, row in enumerate(rows, start=1)
    }
    assert all(d.token_count <= 400 for d in drafts)
    assert set(words(text)) <= {w for d in drafts for w in words(d.text)}


def test_the_chunker_setting_accepts_every_chunker_and_nothing_else() -> None:
    assert get_args(IngestSettings.model_fields["chunker"].annotation) == CHUNKER_MODES
    assert Settings(_env_file=None, ingest={"chunker": "semantic"}).ingest.chunker == "semantic"
    with pytest.raises(ValidationError, match="chunker"):
        Settings(_env_file=None, ingest={"chunker": "sentences"})
