"""Source files in, `LoadedDocument`s out: one loader per format, no database.

A document is a title, an optional source URL and a tuple of `Section`s: runs of Markdown-ish body
text (paragraphs separated by blank lines, list items and table rows on their own lines) under one
heading path. `retrieval.chunking` cuts sections into chunks.

Every failure - unknown suffix, unreadable, empty, binary, truncated or corrupt file - is raised as
`IngestError` naming the file, so an ingestion run can log it and go on with the next one.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from bot.core.errors import IngestError

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".csv", ".docx"}
)

CSV_ROWS_PER_SECTION = 25
_TITLE_MAX_CHARS = 120


@dataclass(frozen=True)
class Section:
    """Body text under one heading path.

    `levels` and `raw_text` keep what `text` flattens, for the Markdown chunker: the level (1-6)
    of each heading in `heading_path`, and the body with its runs of blank lines as written.
    Formats without them (PDF, DOCX, CSV, text) leave them empty. Neither takes part in equality.
    """

    heading_path: tuple[str, ...]
    text: str
    page: int | None = None
    levels: tuple[int, ...] = field(default=(), compare=False)
    raw_text: str = field(default="", compare=False)


@dataclass(frozen=True)
class LoadedDocument:
    source: str
    title: str
    url: str | None
    language: str
    content_hash: str
    sections: tuple[Section, ...]
    meta: dict[str, Any] = field(default_factory=dict, hash=False)


def load_file(path: Path) -> LoadedDocument:
    """Read one file, or raise `IngestError` naming the file and why it can't be used."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        supported = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise IngestError(
            f"{path.name}: unsupported file type {suffix or '(none)'!r} ({supported})"
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path.name}: cannot read ({exc.strerror or exc})") from exc
    if not raw.strip():
        raise IngestError(f"{path.name}: empty file")
    parsed = _LOADERS[suffix](path, raw)
    if not parsed.sections and not parsed.meta.get("pages_without_text"):
        raise IngestError(f"{path.name}: no text found")
    body = "\n".join(section.text for section in parsed.sections)
    return LoadedDocument(
        source=str(path),
        title=parsed.title,
        url=parsed.url,
        language=guess_language(parsed.title + "\n" + body),
        content_hash=hashlib.sha256(raw).hexdigest(),
        sections=tuple(parsed.sections),
        meta=parsed.meta,
    )


def load_directory(
    path: Path, *, recursive: bool = True
) -> Iterator[tuple[Path, LoadedDocument | IngestError]]:
    """Each supported, non-hidden file under `path` in sorted order, with its document or error."""
    if not path.is_dir():
        raise IngestError(f"{path}: not a directory")
    candidates = path.rglob("*") if recursive else path.glob("*")
    files = sorted(
        p
        for p in candidates
        if p.suffix.lower() in SUPPORTED_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(path).parts)
        and p.is_file()
    )
    for file in files:
        try:
            yield file, load_file(file)
        except IngestError as exc:
            yield file, exc


# Letters only Vietnamese uses among Latin scripts: đ ă â ê ô ơ ư and the precomposed tone-marked
# vowels of the Latin Extended Additional block. French é/è alone do not make a text Vietnamese.
_VIETNAMESE_CHARS = re.compile(r"[đĐăĂâÂêÊôÔơƠưƯĩĨũŨ\u1ea0-\u1ef9]")


def guess_language(text: str) -> str:
    """Cheap guess: "vi" when Vietnamese letters are at least 0.5 % of all letters, else "en"."""
    letters = sum(1 for ch in text if ch.isalpha())
    marked = len(_VIETNAMESE_CHARS.findall(text))
    return "vi" if marked and marked >= 0.005 * letters else "en"


@dataclass
class _Parsed:
    title: str
    url: str | None
    sections: list[Section]
    meta: dict[str, Any]


# --- text decoding -------------------------------------------------------------------------------


def _decode(path: Path, raw: bytes) -> str:
    if b"\x00" in raw:
        raise IngestError(f"{path.name}: binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Older Vietnamese sites and Office exports still use Windows-1258; latin-1 never fails.
        try:
            text = raw.decode("cp1258")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
    sample = text[:8192]
    controls = sum(1 for ch in sample if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r\f")
    if controls > 0.05 * len(sample):
        raise IngestError(f"{path.name}: binary file (mostly control characters)")
    # NFC: some scraped pages mix decomposed and precomposed Vietnamese; search must see one form.
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n")


def _tidy(lines: list[str]) -> str:
    """Right-strip lines, collapse runs of blank lines into one, trim blank lines at both ends."""
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def _trimmed(lines: list[str]) -> str:
    """Right-strip lines and trim blank lines at both ends, keeping inner runs of blank lines."""
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def _prettify_stem(stem: str) -> str:
    words = re.sub(r"(?<=[a-zà-ỹ])(?=[A-Z])", " ", re.sub(r"[-_\s]+", " ", stem)).strip()
    return words[:1].upper() + words[1:] if words else stem


# --- Markdown and plain text ---------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
# "_Nguồn: [url](url)_", "_Source: <url>_", "Nguồn: url" and the PTIT scraper's "[URL: url]".
_SOURCE_LINE = re.compile(r"^\s*[_*\[]*\s*(?:nguồn|source|url)\s*:\s*(?P<rest>.*)$", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s<>()\[\]\"']+")
_BRACKETED = re.compile(r"^\[([^\[\]]+)\]$")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# A line of images without alt text has no text to index (scraped pages are full of them).
_BARE_IMAGES = re.compile(r"^\s*(!\[\s*\]\([^)]*\)\s*)+$")
_SOURCE_SCAN_LINES = 8


def _inline_text(markdown: str) -> str:
    text = _MD_LINK.sub(r"\1", markdown)
    text = re.sub(r"(\*\*|__|\*|`)", "", text)
    return " ".join(text.split())


def _take_source_line(lines: list[str]) -> tuple[str | None, str | None]:
    """Find the source URL near the top, remove its line, and return (url, bracketed title)."""
    for index, line in enumerate(lines[:_SOURCE_SCAN_LINES]):
        match = _SOURCE_LINE.match(line)
        url = _URL.search(match.group("rest")) if match else None
        if url is None:
            continue
        del lines[index]
        # The PTIT scraper writes "[page title]" on the line just above "[URL: ...]".
        title = None
        if index > 0 and (bracketed := _BRACKETED.match(lines[index - 1].strip())):
            title = bracketed.group(1).strip()
            del lines[index - 1]
        # A Markdown-emphasised line ("_Nguồn: url_") ends in the emphasis mark, not the URL.
        return url.group(0).rstrip(".,;_*"), title
    return None, None


def _load_markdown(path: Path, raw: bytes) -> _Parsed:
    lines = _decode(path, raw).split("\n")
    url, bracketed_title = _take_source_line(lines)
    title: str | None = None
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    body: list[str] = []
    fence: str | None = None

    def flush() -> None:
        text = _tidy(body)
        if text:
            path = tuple(name for _, name in stack)
            levels = tuple(level for level, _ in stack)
            sections.append(Section(path, text, None, levels, _trimmed(body)))
        body.clear()

    for line in lines:
        if fence is not None:
            body.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        if fence_match := _FENCE.match(line):
            fence = fence_match.group(1)
            body.append(line)
            continue
        heading = _HEADING.match(line)
        if heading is None:
            if not _BARE_IMAGES.match(line):
                body.append(line)
            elif body and not body[-1].strip():
                # The blank lines after a dropped image line separate what is left.
                body.pop()
            continue
        level, name = len(heading.group(1)), _inline_text(heading.group(2))
        if not name:
            continue
        flush()
        if level == 1 and title is None:
            title = name
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, name))
    flush()
    return _Parsed(
        title=title or bracketed_title or _prettify_stem(path.stem),
        url=url,
        sections=sections,
        meta={"format": "markdown"},
    )


def _load_text(path: Path, raw: bytes) -> _Parsed:
    lines = _decode(path, raw).split("\n")
    url, _ = _take_source_line(lines)
    text = _tidy(lines)
    first = next((line.strip() for line in lines if line.strip()), "")
    title = first if len(first) <= _TITLE_MAX_CHARS else _prettify_stem(path.stem)
    sections = [Section((), text)] if text else []
    return _Parsed(title=title, url=url, sections=sections, meta={"format": "text"})


# --- HTML ----------------------------------------------------------------------------------------

_HTML_SKIPPED = frozenset(
    {"script", "style", "nav", "header", "footer", "aside", "form", "noscript", "template", "svg"}
)
_HTML_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "blockquote", "address", "figure", "figcaption"}
    | {"dl", "dt", "dd", "hr", "caption", "details", "summary", "body"}
)
_HTML_HEADINGS = {f"h{level}": level for level in range(1, 7)}


class _HtmlExtractor(HTMLParser):
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
        text = _tidy(self._lines)
        if text:
            path = tuple(name for _, name in self._stack)
            levels = tuple(level for level, _ in self._stack)
            self.sections.append(Section(path, text, None, levels))
        self._lines.clear()


def _load_html(path: Path, raw: bytes) -> _Parsed:
    extractor = _HtmlExtractor()
    try:
        extractor.feed(_decode(path, raw))
        extractor.close()
    except AssertionError as exc:  # html.parser signals some malformed markup this way
        raise IngestError(f"{path.name}: malformed HTML ({exc})") from exc
    urls = [u for u in (extractor.canonical, extractor.og_url) if u and _URL.fullmatch(u.strip())]
    title = " ".join("".join(extractor.title_parts).split()) or extractor.first_h1
    return _Parsed(
        title=title or _prettify_stem(path.stem),
        url=urls[0].strip() if urls else None,
        sections=extractor.sections,
        meta={"format": "html"},
    )


# --- PDF -----------------------------------------------------------------------------------------


def _looks_like_html(raw: bytes) -> bool:
    head = raw[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<html" in head


def _load_pdf(path: Path, raw: bytes) -> _Parsed:
    if b"%PDF-" not in raw[:1024] and _looks_like_html(raw):
        # Seen in the wild: a web page saved under a .pdf name. Read it for what it is.
        parsed = _load_html(path, raw)
        parsed.meta["declared_suffix"] = path.suffix.lower()
        return parsed
    # retrieval.pdf builds on this module's types, so it is imported when first needed.
    from retrieval.pdf import OcrOptions, parse_pdf

    title, sections, meta = parse_pdf(path, raw, OcrOptions())
    return _Parsed(title=title, url=None, sections=sections, meta=meta)


# --- CSV -----------------------------------------------------------------------------------------


def _load_csv(path: Path, raw: bytes) -> _Parsed:
    text = _decode(path, raw)
    try:
        delimiter = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = ","
    try:
        rows = [
            [cell.strip() for cell in row]
            for row in csv.reader(io.StringIO(text), delimiter=delimiter)
        ]
    except csv.Error as exc:
        raise IngestError(f"{path.name}: malformed CSV ({exc})") from exc
    sections = [
        Section((caption,) if caption else (), _markdown_table(header, piece))
        for caption, header, body in _csv_tables([row for row in rows if any(row)])
        for piece in _even_pieces(body, CSV_ROWS_PER_SECTION)
    ]
    return _Parsed(
        title=_prettify_stem(path.stem),
        url=None,
        sections=sections,
        meta={"format": "csv", "delimiter": delimiter, "rows": len(rows)},
    )


def _csv_tables(rows: list[list[str]]) -> Iterator[tuple[str, list[str], list[list[str]]]]:
    """Split rows into (caption, header, body) tables.

    A row with one filled cell in a wide sheet is a caption ("2024" above that year's cut-off
    scores) and the row after it is that table's header; otherwise the first row is the header.
    """
    width = max(len(row) for row in rows) if rows else 0

    def is_caption(row: list[str]) -> bool:
        return width > 2 and bool(row[0]) and not any(row[1:])

    index = 0
    while index < len(rows):
        caption = ""
        if is_caption(rows[index]) and index + 1 < len(rows):
            caption = rows[index][0]
            index += 1
        header = rows[index]
        end = index + 1
        while end < len(rows) and not is_caption(rows[end]):
            end += 1
        yield caption, header, rows[index + 1 : end]
        index = end


def _even_pieces(rows: list[list[str]], most: int) -> list[list[list[str]]]:
    if not rows:
        return [[]]
    count = math.ceil(len(rows) / most)
    size = math.ceil(len(rows) / count)
    return [rows[start : start + size] for start in range(0, len(rows), size)]


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    used = [
        column
        for column in range(max(len(row) for row in [header, *rows]))
        if any(column < len(row) and row[column] for row in [header, *rows])
    ]

    def render(row: list[str]) -> str:
        cells = [
            row[c].replace("|", "\\|").replace("\n", " ") if c < len(row) else "" for c in used
        ]
        return "| " + " | ".join(cells) + " |"

    lines = [render(header), "| " + " | ".join("---" for _ in used) + " |"]
    lines.extend(render(row) for row in rows)
    return "\n".join(lines)


def _load_docx(path: Path, raw: bytes) -> _Parsed:
    from retrieval.docx import read_docx  # imported late: retrieval.docx builds on this module

    content = read_docx(path, raw)
    return _Parsed(title=content.title, url=None, sections=content.sections, meta=content.meta)


_LOADERS: dict[str, Callable[[Path, bytes], _Parsed]] = {
    ".md": _load_markdown,
    ".markdown": _load_markdown,
    ".txt": _load_text,
    ".html": _load_html,
    ".htm": _load_html,
    ".pdf": _load_pdf,
    ".csv": _load_csv,
    ".docx": _load_docx,
}
