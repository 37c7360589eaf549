"""The `markdown` chunker: the web-site chatbot's split thresholds, whole rows and items, paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.answer.parts import AnswererParts
from retrieval.chunking import chunk_for
from retrieval.chunking.base import ChunkDraft, ChunkSizes, approx_tokens, contextual_header
from retrieval.chunking.markdown import chunk_markdown
from retrieval.crawl.pages import extract_page, page_document
from retrieval.loading import load_file
from retrieval.loading.document import LoadedDocument, Section
from tests.retrieval._support import DATASETS

UIT = DATASETS / "uit-admissions" / "corpus"

SYLLABLES = [
    *("học", "phí", "ngành", "khoa", "máy", "tính", "năm", "nay", "trường", "tuyển"),
    *("sinh", "điểm", "chuẩn", "xét", "hồ", "sơ", "thí", "thông", "tin", "bằng"),
    *("cấp", "lớp", "kỳ", "thi", "đợt", "một", "hai", "ba", "bốn"),
]


def line(tokens: int, start: int = 0) -> str:
    """A line of `tokens` syllables: exactly `tokens` tokens by `approx_tokens`."""
    return " ".join(SYLLABLES[(start + i) % len(SYLLABLES)] for i in range(tokens))


def lines(total: int, per_line: int = 20, start: int = 0) -> str:
    assert total % per_line == 0
    return "\n".join(line(per_line, start + i) for i in range(total // per_line))


def markdown_file(tmp_path: Path, body: str, name: str = "trang.md") -> LoadedDocument:
    path = tmp_path / name
    path.write_text(f"# Thông báo tuyển sinh\n\n{body}\n", encoding="utf-8")
    return load_file(path)


def chunks(doc: LoadedDocument, *, max_tokens: int = 2000) -> list[ChunkDraft]:
    target = min(280, max_tokens)
    return chunk_markdown(
        doc,
        count_tokens=approx_tokens,
        sizes=ChunkSizes(target_tokens=target, max_tokens=max_tokens),
    )


def paths(drafts: list[ChunkDraft]) -> list[tuple[str, ...]]:
    return [draft.heading_path for draft in drafts]


# -- the thresholds ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "before", "splits"),
    [
        ("##", 180, False),
        ("##", 220, True),
        ("###", 220, False),
        ("###", 280, False),
        ("###", 320, True),
        ("####", 380, False),
        ("####", 420, True),
        ("#####", 780, False),
        ("#####", 800, True),  # a level-5 heading is only a line
    ],
)
def test_a_heading_ends_a_chunk_once_its_level_threshold_is_passed(
    tmp_path: Path, level: str, before: int, splits: bool
) -> None:
    body = f"## Phần A\n{lines(before)}\n\n{level} Mục B\n{lines(20, start=3)}"
    drafts = chunks(markdown_file(tmp_path, body))
    assert len(drafts) == (2 if splits else 1)
    if splits:
        assert "Mục B" in drafts[1].heading_path
        assert drafts[1].text == lines(20, start=3)  # the heading is in the path, not the text
        assert drafts[0].text == lines(before)
    else:
        # One chunk spanning both headings: the shared path, B's heading kept as a line.
        assert "\nMục B\n" in f"\n{drafts[0].text}\n"


@pytest.mark.parametrize(
    ("blank_lines", "before", "splits"),
    [(3, 380, False), (3, 420, True), (2, 420, False), (2, 480, False), (2, 520, True)],
)
def test_runs_of_blank_lines_end_a_chunk_past_400_and_500_tokens(
    tmp_path: Path, blank_lines: int, before: int, splits: bool
) -> None:
    gap = "\n" * (blank_lines + 1)
    drafts = chunks(markdown_file(tmp_path, f"{lines(before)}{gap}{lines(100, start=5)}"))
    assert [d.text for d in drafts] == (
        [lines(before), lines(100, start=5)]
        if splits
        else [f"{lines(before)}\n\n{lines(100, start=5)}"]
    )


def test_a_single_blank_line_is_only_a_line_boundary(tmp_path: Path) -> None:
    body = "\n\n".join(lines(100, start=i) for i in range(10))  # 1,000 tokens
    drafts = chunks(markdown_file(tmp_path, body))
    # Paragraph breaks at 100, 200, ... 700 tokens pass: the first chunk ends at 800.
    assert [d.token_count for d in drafts] == [800, 200]


def test_a_list_ends_a_chunk_between_items_past_600_tokens(tmp_path: Path) -> None:
    items = "\n".join(f"- {line(19, i)}" for i in range(40))  # 40 items of 20 tokens
    drafts = chunks(markdown_file(tmp_path, f"Các đối tượng:\n{items}"))
    # Blocks of 4 + 20 x n tokens: 29 items make 584, the 30th takes the chunk past 600.
    first, rest = drafts
    assert first.text.count("\n- ") == 30
    assert rest.text.startswith("- ")
    assert rest.text.count("- ") == 10


def test_plain_lines_end_a_chunk_only_past_800_tokens(tmp_path: Path) -> None:
    drafts = chunks(markdown_file(tmp_path, lines(1000)))
    assert [d.token_count for d in drafts] == [800, 200]


def test_the_embedder_limit_ends_a_chunk_at_its_best_boundary(tmp_path: Path) -> None:
    paragraphs = [lines(100, start=i) for i in range(9)]
    body = "\n\n".join(paragraphs[:3]) + "\n\n\n" + "\n\n".join(paragraphs[3:])
    drafts = chunks(markdown_file(tmp_path, body), max_tokens=400)
    # 900 tokens, no rule reached below 400: cut at the 2-blank-line run (the strongest
    # boundary), then at whole paragraphs; never inside a paragraph.
    assert [d.token_count for d in drafts] == [300, 400, 200]
    for draft in drafts:
        assert all(p in paragraphs for p in draft.text.split("\n\n"))


def test_a_chunk_cut_early_keeps_200_tokens_when_it_can(tmp_path: Path) -> None:
    body = f"## A\n{lines(60)}\n\n## B\n{lines(340, start=2)}"
    drafts = chunks(markdown_file(tmp_path, body), max_tokens=400)
    # The heading of B (a strong boundary) comes at 60 tokens, too early; the chunk holds on
    # and is cut at the latest line that fits instead.
    assert drafts[0].token_count >= 200
    assert all(d.token_count <= 400 for d in drafts)


# -- what is never cut -------------------------------------------------------------------------


def test_table_rows_are_never_cut_and_each_piece_repeats_the_header(tmp_path: Path) -> None:
    header = ["| STT | Mã ngành | Tên ngành | Chỉ tiêu |", "| --- | --- | --- | --- |"]
    rows = [f"| {i} | 74801{i:02d} | {line(12, i)} | {100 + i} |" for i in range(60)]
    drafts = chunks(markdown_file(tmp_path, "\n".join([*header, *rows])), max_tokens=300)
    assert len(drafts) > 2
    seen: list[str] = []
    for draft in drafts:
        assert draft.token_count <= 300
        assert draft.text.split("\n")[:2] == header
        seen.extend(draft.text.split("\n")[2:])
    assert seen == rows


def test_list_items_with_continuation_lines_are_never_cut(tmp_path: Path) -> None:
    items = [f"{i}. {line(15, i)}\n   {line(15, i + 7)}" for i in range(1, 41)]
    drafts = chunks(markdown_file(tmp_path, "\n".join(items)), max_tokens=200)
    assert len(drafts) > 4
    joined = [d.text for d in drafts]
    for item in items:
        assert sum(item in text for text in joined) == 1, item
    assert all(not text.startswith("   ") for text in joined)


def test_a_table_header_never_ends_a_chunk_alone(tmp_path: Path) -> None:
    table = "| Tổ hợp | Môn |\n| --- | --- |\n| A00 | Toán, Lí, Hóa |"
    drafts = chunks(markdown_file(tmp_path, f"{lines(380)}\n\n{table}"), max_tokens=400)
    assert drafts[-1].text.startswith("| Tổ hợp | Môn |\n| --- | --- |\n| A00 |")


# -- heading paths, pages, formats -------------------------------------------------------------


def test_chunks_of_a_uit_admission_page_keep_their_heading_paths() -> None:
    page = UIT / "phuong-thuc-tuyen-sinh.md"
    if not page.is_file():
        pytest.skip(f"shared dataset not found at {page}")
    doc = load_file(page)
    drafts = chunk_for(doc, "markdown", count_tokens=approx_tokens)
    assert [d.ordinal for d in drafts] == list(range(len(drafts)))
    assert all(d.page is None and d.token_count <= 400 for d in drafts)
    names = {name for section in doc.sections for name in section.heading_path}
    for draft in drafts:
        assert set(draft.heading_path) <= names
    assert any(d.heading_path == ("1. Phương thức 1",) for d in drafts)
    # Nothing is lost: every source line is in some chunk.
    text = "\n".join(d.text for d in drafts)
    for section in doc.sections:
        for source_line in section.text.split("\n"):
            assert source_line.strip() in text, source_line


def test_a_markdown_regulation_keeps_chapter_and_article_in_its_paths(tmp_path: Path) -> None:
    articles = "\n\n".join(
        f"### Điều {n}. Quy định số {n}\n1. {line(90, n)}.\n2. {line(40, n + 3)}."
        for n in range(1, 5)
    )
    body = f"## Chương I. QUY ĐỊNH CHUNG\n\n{articles}"
    drafts = chunks(markdown_file(tmp_path, body, "quy-che.md"), max_tokens=400)
    # Two articles (~140 tokens each) stay under the level-3 threshold (300) and share a
    # chunk; a third would pass 400, so the chunk ends at that article's heading.
    assert len(drafts) == 2
    for draft, first in zip(drafts, (1, 3), strict=True):
        assert draft.heading_path[0] == "Chương I. QUY ĐỊNH CHUNG"
        assert draft.text.startswith(f"Điều {first}. Quy định số {first}\n1. ")
        assert f"\n\nĐiều {first + 1}. Quy định số {first + 1}\n1. " in draft.text


def test_a_new_page_always_starts_a_chunk_and_keeps_its_number() -> None:
    doc = LoadedDocument(
        "thong-bao.pdf",
        "Thông báo",
        None,
        "vi",
        "0" * 64,
        (Section((), lines(40), 1), Section((), lines(40, start=1), 2), Section((), "Ký tên", 3)),
    )
    drafts = chunks(doc)
    assert [(d.page, d.text) for d in drafts] == [
        (1, lines(40)),
        (2, lines(40, start=1)),
        (3, "Ký tên"),
    ]


def test_html_heading_levels_set_the_thresholds(tmp_path: Path) -> None:
    html = (
        "<html><head><title>Học phí</title></head><body><h1>Học phí</h1>"
        f"<h2>Chương trình chuẩn</h2><p>{line(250)}</p>"
        f"<h3>Học kỳ hè</h3><p>{line(50, 4)}</p>"
        f"<h2>Chương trình tiên tiến</h2><p>{line(60, 9)}</p></body></html>"
    )
    (tmp_path / "hoc-phi.html").write_text(html, encoding="utf-8")
    drafts = chunks(load_file(tmp_path / "hoc-phi.html"))
    # h3 at 250 tokens stays (< 300); h2 at 300 tokens splits (> 200).
    assert paths(drafts) == [("Chương trình chuẩn",), ("Chương trình tiên tiến",)]
    assert "\n\nHọc kỳ hè\n" in drafts[0].text


def test_a_crawled_page_is_chunked_by_its_markdown_headings() -> None:
    html = (
        "<html><head><title>Tuyển sinh</title></head><body><main>"
        f"<h2>Đối tượng</h2><p>{line(230)}</p><h2>Hồ sơ</h2><ul>"
        + "".join(f"<li>{line(10, i)}</li>" for i in range(5))
        + "</ul></main></body></html>"
    )
    url = "https://tuyensinh.example.vn/thong-bao"
    doc = page_document(extract_page(html, url), url, links=[], depth=0)
    drafts = chunks(doc)
    assert paths(drafts) == [("Đối tượng",), ("Hồ sơ",)]
    assert drafts[1].text.count("\n") == 4  # five list items, one per line


def test_chunk_for_markdown_is_this_chunker(tmp_path: Path) -> None:
    doc = markdown_file(tmp_path, f"## A\n{lines(300)}\n\n## B\n{lines(300, start=1)}")
    assert chunk_for(doc, "markdown") == chunk_markdown(
        doc, sizes=ChunkSizes(target_tokens=280, max_tokens=400)
    )
    with pytest.raises(ValueError, match="target_tokens"):
        chunk_markdown(doc, sizes=ChunkSizes(target_tokens=500, max_tokens=400))


def test_chunks_and_their_headers_fit_e5_with_its_own_token_counts(
    parts: AnswererParts,
) -> None:
    if not UIT.is_dir():
        pytest.skip(f"shared dataset not found at {UIT}")
    count = parts.embedder.count_tokens
    for path in sorted(UIT.glob("*.md"))[:12]:
        doc = load_file(path)
        for draft in chunk_for(doc, "markdown", count_tokens=count):
            assert draft.token_count == count(draft.text) <= 400
            header = contextual_header(doc.title, draft.heading_path, draft.page)
            assert count(f"{header}\n{draft.text}") <= 512, (path.name, draft.ordinal)


def test_empty_documents_give_no_chunks() -> None:
    doc = LoadedDocument("trong.md", "Trống", None, "vi", "0" * 64, ())
    assert chunks(doc) == []
