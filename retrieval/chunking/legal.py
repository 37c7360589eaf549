"""Chunk Vietnamese regulations by their own structure: Chương, Mục, Điều, Khoản.

A regulation ("Quy chế", "Quy định", a law) is a tree: chapters ("CHƯƠNG I" / "Chương 2"),
optional parts ("Mục 1"), articles ("Điều 12. Title") and clauses ("1.", "2.", with points
"a)", "b)"). A question is usually about one article, so an article is one chunk when it fits in
`max_tokens`, its chunk text starting with the article heading and its heading path ending in
"Chương I. Quy định chung", "Mục 1. …", "Điều 5. Title". A longer article is cut at clause
borders, then lines, then sentences with overlap (by `chunk_document`). Text outside articles
(the preamble before Điều 1, an appendix) is chunked like any other document, never dropped.

Headings are found in section text (PDF, plain text) and in heading paths (Markdown headings
"## Điều 3. …", DOCX heading styles) alike.

`retrieval.chunking.chunk_for` picks it for a regulation when the chunker setting is "auto".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from retrieval.chunking.base import (
    DEFAULT_SIZES,
    ChunkDraft,
    ChunkSizes,
    TokenCounter,
    approx_tokens,
)
from retrieval.chunking.structure import chunk_document
from retrieval.loading.document import LoadedDocument, Section

# Fewer article headings than this, without chapters, is a document that cites articles.
MIN_ARTICLES = 3

_DECORATION = re.compile(r"^[\s#>*_]+|[\s*_]+$")
_NUMERAL = r"(?P<number>[IVXLC]+|\d+)"
_CHAPTER = re.compile(rf"^chương\s+{_NUMERAL}(?![\w])[\s.:\-–]*(?P<title>.*)$", re.I)
_PART = re.compile(rf"^mục\s+{_NUMERAL}(?![\w])[\s.:\-–]*(?P<title>.*)$", re.I)
# "Điều 12. Title", "Điều 12: Title", "ĐIỀU 12", "Điều 12a." - not "Điều 20 của Quy chế ...".
_ARTICLE = re.compile(r"^điều\s+(?P<number>\d+[a-zđ]?)(?P<rest>(?:[.:\-–]|\s|$).*)$", re.I)
_CLAUSE = re.compile(r"^\d{1,2}\s*[.)]\s+\S")
# The recipients block that ends a Vietnamese administrative document (Nghị định 30/2020/NĐ-CP).
_CLOSING = re.compile(r"^nơi\s+nhận\s*:", re.I)


@dataclass
class _Block:
    path: tuple[str, ...]
    is_article: bool
    lines: list[tuple[str, int | None]] = field(default_factory=list)


def is_regulation(doc: LoadedDocument) -> bool:
    """At least `MIN_ARTICLES` article headings, or two chapters holding articles or parts."""
    chapters: set[str] = set()
    parts: set[str] = set()
    articles: set[str] = set()
    for line in _all_heading_candidates(doc):
        kind, number, _ = _heading(line) or ("", "", "")
        if kind == "chapter":
            chapters.add(number.upper())
        elif kind == "part":
            parts.add(number.upper())
        elif kind == "article":
            articles.add(number.lower())
    return len(articles) >= MIN_ARTICLES or (len(chapters) >= 2 and bool(parts or articles))


def chunk_regulation(
    doc: LoadedDocument,
    *,
    count_tokens: TokenCounter = approx_tokens,
    sizes: ChunkSizes = DEFAULT_SIZES,
) -> list[ChunkDraft]:
    """Chunks of `doc` in reading order, numbered 0..n-1: one per article that fits."""

    def drafts_of(sections: list[Section]) -> list[ChunkDraft]:
        view = LoadedDocument(doc.source, doc.title, doc.url, doc.language, "", tuple(sections))
        return chunk_document(view, count_tokens=count_tokens, sizes=sizes)

    drafts: list[ChunkDraft] = []
    loose: list[Section] = []

    def add(pieces: list[ChunkDraft]) -> None:
        for piece in pieces:
            drafts.append(
                ChunkDraft(
                    len(drafts), piece.text, piece.heading_path, piece.page, piece.token_count
                )
            )

    for block in _blocks(doc):
        if not block.is_article:
            # Consecutive loose blocks (a preamble over several pages) may share chunks.
            loose.extend(_loose_sections(block))
            continue
        if loose:
            add(drafts_of(loose))
            loose = []
        text = _article_text(block)
        page = block.lines[0][1]
        size = count_tokens(text)
        if size <= sizes.max_tokens:
            drafts.append(ChunkDraft(len(drafts), text, block.path, page, size))
        else:
            add(_with_pages(drafts_of([Section(block.path, text, page)]), block))
    if loose:
        add(drafts_of(loose))
    return drafts


# --- headings ------------------------------------------------------------------------------------


def _heading(line: str) -> tuple[str, str, str] | None:
    """(kind, number, title) of a chapter, part or article heading line, or None."""
    bare = _DECORATION.sub("", line)
    if len(bare) > 300:
        return None
    for kind, pattern in (("chapter", _CHAPTER), ("part", _PART)):
        if match := pattern.match(bare):
            title = match.group("title").strip()
            if title[:1].islower():
                return None  # "Mục 2 của Điều này": a reference in running text
            return kind, match.group("number"), title
    if match := _ARTICLE.match(bare):
        rest = match.group("rest")
        title = _DECORATION.sub("", rest.strip().lstrip(".:-–"))
        punctuated = re.match(r"\s*[.:\-–]", rest) is not None
        # Without a dot or colon only a capitalised title makes a heading ("Điều 5 Hiệu lực"),
        # and a lower-case word never does ("Điều 20 của Quy chế ..." in running text).
        if title and (title[:1].islower() or not (punctuated or title[:1].isupper())):
            return None
        return "article", match.group("number"), title
    return None


def _label(kind: str, number: str, title: str) -> str:
    word = {"chapter": "Chương", "part": "Mục", "article": "Điều"}[kind]
    title = title.rstrip(" .:")
    if title and title.upper() == title and any(ch.isalpha() for ch in title):
        title = title[:1] + title[1:].lower()  # "QUY ĐỊNH CHUNG" -> "Quy định chung"
    return f"{word} {number.upper() if kind != 'article' else number}. {title}".rstrip(" .")


def _is_title_line(line: str) -> bool:
    """The line after a bare "CHƯƠNG I": a short heading such as "QUY ĐỊNH CHUNG"."""
    bare = _DECORATION.sub("", line)
    return (
        bool(bare)
        and _heading(bare) is None
        and not _CLAUSE.match(bare)
        and len(bare.split()) <= 20
        and (bare.upper() == bare or not bare.endswith((".", ";", ":")))
    )


def _all_heading_candidates(doc: LoadedDocument) -> Iterator[str]:
    for section in doc.sections:
        yield from section.heading_path
        yield from section.text.split("\n")


# --- blocks --------------------------------------------------------------------------------------


def _blocks(doc: LoadedDocument) -> list[_Block]:
    """The document as runs of lines under one heading path: articles and the text between."""
    blocks: list[_Block] = []
    legal: list[str] = []  # chapter, part, article labels in force
    kinds: list[str] = []
    previous_context: tuple[str, ...] | None = None
    previous_legal_headings: tuple[str, ...] = ()
    current: _Block | None = None
    # Chapter and part heading lines open the next block: they are in its heading path too, but
    # a chunk of just "CHƯƠNG I / QUY ĐỊNH CHUNG" would answer nothing.
    pending: list[tuple[str, int | None]] = []

    def open_block(is_article: bool, context: tuple[str, ...]) -> _Block:
        block = _Block((*context, *legal), is_article, list(pending))
        pending.clear()
        blocks.append(block)
        return block

    for section in doc.sections:
        context = tuple(h for h in section.heading_path if _heading(h) is None)
        legal_headings = tuple(h for h in section.heading_path if _heading(h) is not None)
        if context != previous_context:
            if pending:
                open_block(False, previous_context or ())
            legal, kinds, current = [], [], None
        # Legal headings held in a heading path (Markdown "## Điều 3", DOCX styles) are read
        # as if they were lines at the top of the section.
        new_headings = [h for h in legal_headings if h not in previous_legal_headings]
        previous_context, previous_legal_headings = context, legal_headings
        lines = [*new_headings, *section.text.split("\n")]
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            heading = _heading(line) if line.strip() else None
            if heading is None and _CLOSING.match(_DECORATION.sub("", line)):
                # "Nơi nhận:" closes the body: the signature and any attachment (a decision's
                # "Thông tin tuyển sinh") are not part of its last article.
                legal, kinds = [], []
                current = open_block(False, context)
                current.lines.append((line, section.page))
                continue
            if heading is None:
                if current is None:
                    if not line.strip():
                        continue
                    current = open_block(False, context)
                current.lines.append((line, section.page))
                continue
            kind, number, title = heading
            consumed = [line]
            if not title and kind != "article":
                following = index
                while following < len(lines) and not lines[following].strip():
                    following += 1
                if following < len(lines) and _is_title_line(lines[following]):
                    title = _DECORATION.sub("", lines[following])
                    consumed.append(lines[following])
                    index = following + 1
            rank = {"chapter": 0, "part": 1, "article": 2}[kind]
            while kinds and {"chapter": 0, "part": 1, "article": 2}[kinds[-1]] >= rank:
                kinds.pop()
                legal.pop()
            kinds.append(kind)
            legal.append(_label(kind, number, title))
            if kind == "article":
                current = open_block(True, context)
                current.lines.extend((text, section.page) for text in consumed)
            else:
                pending.extend((text, section.page) for text in consumed)
                current = None
    if pending:
        open_block(False, previous_context or ())
    return [block for block in blocks if any(text.strip() for text, _ in block.lines)]


def _loose_sections(block: _Block) -> list[Section]:
    sections: list[Section] = []
    for text, page in block.lines:
        if sections and sections[-1].page == page:
            last = sections[-1]
            sections[-1] = Section(last.heading_path, f"{last.text}\n{text}", page)
        else:
            sections.append(Section(block.path, text, page))
    return [s for s in sections if s.text.strip()]


def _article_text(block: _Block) -> str:
    """The article's lines, a blank line before each clause so that clause borders are where
    `chunk_document` prefers to cut."""
    out: list[str] = []
    for text, _ in block.lines:
        if _CLAUSE.match(_DECORATION.sub("", text)) and out and out[-1]:
            out.append("")
        out.append(text.rstrip())
    while out and not out[-1]:
        out.pop()
    while out and not out[0]:
        out.pop(0)
    return "\n".join(out)


def _with_pages(drafts: list[ChunkDraft], block: _Block) -> list[ChunkDraft]:
    """Give each piece of an article that runs over pages the page where the piece starts."""
    pages = {page for _, page in block.lines}
    if len(pages) <= 1:
        return drafts
    located: list[ChunkDraft] = []
    position = 0
    page = block.lines[0][1]
    for draft in drafts:
        first_line = " ".join(draft.text.split("\n")[0].split())
        for offset, (text, line_page) in enumerate(block.lines[position:], start=position):
            line = " ".join(text.split())
            if line and first_line and (line.startswith(first_line) or first_line in line):
                page, position = line_page, offset
                break
        located.append(
            ChunkDraft(draft.ordinal, draft.text, draft.heading_path, page, draft.token_count)
        )
    return located
