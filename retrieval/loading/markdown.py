"""Markdown and plain-text files: headings become heading paths, a source line becomes the URL."""

from __future__ import annotations

import re
from pathlib import Path

from retrieval.loading.document import (
    FENCE,
    TITLE_MAX_CHARS,
    ParsedDocument,
    Section,
    decode_text,
    prettify_stem,
    tidy_lines,
    trimmed_lines,
)

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
# "_Nguồn: [url](url)_", "_Source: <url>_", "Nguồn: url" and the PTIT scraper's "[URL: url]".
_SOURCE_LINE = re.compile(r"^\s*[_*\[]*\s*(?:nguồn|source|url)\s*:\s*(?P<rest>.*)$", re.IGNORECASE)
URL = re.compile(r"https?://[^\s<>()\[\]\"']+")
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
        url = URL.search(match.group("rest")) if match else None
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


def read_markdown(path: Path, raw: bytes) -> ParsedDocument:
    lines = decode_text(path, raw).split("\n")
    url, bracketed_title = _take_source_line(lines)
    title: str | None = None
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    body: list[str] = []
    fence: str | None = None

    def flush() -> None:
        text = tidy_lines(body)
        if text:
            path = tuple(name for _, name in stack)
            levels = tuple(level for level, _ in stack)
            sections.append(Section(path, text, None, levels, trimmed_lines(body)))
        body.clear()

    for line in lines:
        if fence is not None:
            body.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        if fence_match := FENCE.match(line):
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
    return ParsedDocument(
        title=title or bracketed_title or prettify_stem(path.stem),
        url=url,
        sections=sections,
        meta={"format": "markdown"},
    )


def read_text(path: Path, raw: bytes) -> ParsedDocument:
    lines = decode_text(path, raw).split("\n")
    url, _ = _take_source_line(lines)
    text = tidy_lines(lines)
    first = next((line.strip() for line in lines if line.strip()), "")
    title = first if len(first) <= TITLE_MAX_CHARS else prettify_stem(path.stem)
    sections = [Section((), text)] if text else []
    return ParsedDocument(title=title, url=url, sections=sections, meta={"format": "text"})


# --- HTML ----------------------------------------------------------------------------------------
