"""HTML files: the body text as sections under its headings, page chrome dropped."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from bot.core.errors import IngestError
from retrieval.loading.document import (
    ParsedDocument,
    Section,
    decode_text,
    prettify_stem,
    tidy_lines,
)
from retrieval.loading.markdown import URL

_HTML_SKIPPED = frozenset(
    {"script", "style", "nav", "header", "footer", "aside", "form", "noscript", "template", "svg"}
)
_HTML_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "blockquote", "address", "figure", "figcaption"}
    | {"dl", "dt", "dd", "hr", "caption", "details", "summary", "body"}
)
_HTML_HEADINGS = {f"h{level}": level for level in range(1, 7)}


class HtmlExtractor(HTMLParser):
    """Body text of a page as sections; page chrome (nav, header, footer, forms...) is dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = []
        self.first_h1 = ""
        self.canonical: str | None = None
        self.og_url: str | None = None
        self._title: list[str] | None = None
        self.title_parts: list[str] = []
        self._stack: list[tuple[int, str]] = []
        self._lines: list[str] = []
        self._inline: list[str] = []
        self._prefix = ""
        self._skipping = 0
        self._heading: tuple[int, list[str]] | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._rows_in_table = 0
        self._links: list[tuple[str | None, int]] = []
        self._lists = 0
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "link" and "canonical" in attributes.get("rel", "").lower().split():
            self.canonical = attributes.get("href")
        elif tag == "meta" and attributes.get("property", "").lower() == "og:url":
            self.og_url = attributes.get("content")
        if tag in _HTML_SKIPPED:
            self._skipping += 1
        if self._skipping:
            return
        if tag == "title":
            self._title = self.title_parts
        elif tag in _HTML_HEADINGS:
            self._end_paragraph()
            self._heading = (_HTML_HEADINGS[tag], [])
        elif tag == "br":
            self._end_line()
        elif tag == "li":
            self._end_line()
            self._prefix = "  " * max(0, self._lists - 1) + "- "
        elif tag in ("ul", "ol"):
            self._end_line() if self._lists else self._end_paragraph()
            self._lists += 1
        elif tag == "table":
            self._end_paragraph()
            self._rows_in_table = 0
        elif tag == "tr":
            self._end_row()
            self._row = []
        elif tag in ("td", "th"):
            self._end_cell()
            self._row = [] if self._row is None else self._row
            self._cell = []
        elif tag == "a":
            href = attributes.get("href", "").strip()
            absolute = href if re.match(r"https?://", href, re.IGNORECASE) else None
            self._links.append((absolute, len(self._buffer())))
        elif tag == "pre":
            self._end_paragraph()
            self._pre += 1
        elif tag in _HTML_BLOCKS:
            self._end_paragraph()

    def handle_endtag(self, tag: str) -> None:
        if tag in _HTML_SKIPPED:
            self._skipping = max(0, self._skipping - 1)
            return
        if self._skipping:
            return
        if tag == "title":
            self._title = None
        elif tag in _HTML_HEADINGS:
            self._end_heading()
        elif tag == "li":
            self._end_line()
        elif tag in ("ul", "ol"):
            self._lists = max(0, self._lists - 1)
            self._end_line() if self._lists else self._end_paragraph()
        elif tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_row()
        elif tag == "table":
            self._end_row()
            self._end_paragraph()
        elif tag == "a":
            self._end_link()
        elif tag == "pre":
            self._end_paragraph()
            self._pre = max(0, self._pre - 1)
        elif tag in _HTML_BLOCKS:
            self._end_paragraph()

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if self._title is not None:
            self._title.append(data)
        elif self._pre and self._heading is None and self._cell is None:
            first, *rest = data.split("\n")
            self._inline.append(first)
            for part in rest:
                self._end_line(keep_spaces=True)
                self._inline.append(part)
        else:
            self._buffer().append(data)

    def close(self) -> None:
        super().close()
        self._end_row()
        self._end_section()

    def _buffer(self) -> list[str]:
        if self._heading is not None:
            return self._heading[1]
        return self._cell if self._cell is not None else self._inline

    def _end_line(self, *, keep_spaces: bool = False) -> None:
        text = "".join(self._inline)
        text = text.rstrip() if keep_spaces else " ".join(text.split())
        self._inline.clear()
        if text.strip():
            self._lines.append(self._prefix + text)
            self._prefix = ""

    def _end_paragraph(self) -> None:
        self._end_line()
        if self._lines and self._lines[-1]:
            self._lines.append("")

    def _end_cell(self) -> None:
        if self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()).replace("|", "\\|"))
        self._cell = None

    def _end_row(self) -> None:
        self._end_cell()
        row, self._row = self._row, None
        if not row or not any(row):
            return
        self._end_line()
        self._lines.append("| " + " | ".join(row) + " |")
        if self._rows_in_table == 0:
            self._lines.append("| " + " | ".join("---" for _ in row) + " |")
        self._rows_in_table += 1

    def _end_link(self) -> None:
        if not self._links:
            return
        href, start = self._links.pop()
        buffer = self._buffer()
        text = " ".join("".join(buffer[start:]).split())
        if href and text and href not in text:
            buffer.append(f" ({href})")

    def _end_heading(self) -> None:
        if self._heading is None:
            return
        level, parts = self._heading
        self._heading = None
        name = " ".join("".join(parts).split())
        if not name:
            return
        self._end_section()
        if level == 1 and not self.first_h1:
            self.first_h1 = name
            return
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, name))

    def _end_section(self) -> None:
        self._end_paragraph()
        text = tidy_lines(self._lines)
        if text:
            path = tuple(name for _, name in self._stack)
            levels = tuple(level for level, _ in self._stack)
            self.sections.append(Section(path, text, None, levels))
        self._lines.clear()


def read_html(path: Path, raw: bytes) -> ParsedDocument:
    extractor = HtmlExtractor()
    try:
        extractor.feed(decode_text(path, raw))
        extractor.close()
    except AssertionError as exc:  # html.parser signals some malformed markup this way
        raise IngestError(f"{path.name}: malformed HTML ({exc})") from exc
    urls = [u for u in (extractor.canonical, extractor.og_url) if u and URL.fullmatch(u.strip())]
    title = " ".join("".join(extractor.title_parts).split()) or extractor.first_h1
    return ParsedDocument(
        title=title or prettify_stem(path.stem),
        url=urls[0].strip() if urls else None,
        sections=extractor.sections,
        meta={"format": "html"},
    )


def looks_like_html(raw: bytes) -> bool:
    head = raw[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head
