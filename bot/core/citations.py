"""How a reply names its sources: written by the answer ("[1] Học phí 2026 — https://…"), read
back by the channels, which show the ones with a web address as buttons."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.types import Language


@dataclass(frozen=True)
class Citation:
    n: int
    title: str
    source: str
    url: str | None
    page: int | None
    chunk_id: int | None = None


# The headings of a reply's source lists, by language: written by ``sources_block`` and
# ``related_block``, read back by ``source_links`` (channels show them as buttons).
SOURCES_HEADING = {"vi": "Nguồn:", "en": "Sources:"}
RELATED_HEADING = {"vi": "Có thể liên quan:", "en": "Possibly related:"}
_SOURCE_LINE = re.compile(r"^\[(\d+)\] (.*?) — (https?://\S+?)(?:, (?:trang|page) \d+)?$")


@dataclass(frozen=True)
class SourceLink:
    """A numbered source of a reply with its web address."""

    n: int
    title: str
    url: str


@dataclass(frozen=True)
class SourceBlock:
    heading: str  # "Nguồn", "Có thể liên quan", "Sources", "Possibly related"
    links: tuple[SourceLink, ...]


def source_links(text: str) -> tuple[str, SourceBlock | None]:
    """``text`` without its source list, and that list, when every line of it has a web
    address (as ``citation_line`` writes it: "[1] Học phí 2026 — https://…"). A list naming
    files only stays in the text, as does any block after the first."""
    headings = {*SOURCES_HEADING.values(), *RELATED_HEADING.values()}
    paragraphs = text.split("\n\n")
    for index, paragraph in enumerate(paragraphs):
        lines = paragraph.strip().split("\n")
        if lines[0].strip() not in headings or len(lines) < 2:
            continue
        matches = [_SOURCE_LINE.match(line.strip()) for line in lines[1:]]
        if not all(matches):
            return text, None
        links = tuple(
            SourceLink(int(m.group(1)), m.group(2), m.group(3)) for m in matches if m is not None
        )
        body = "\n\n".join(paragraphs[:index] + paragraphs[index + 1 :])
        return body, SourceBlock(lines[0].strip().rstrip(":"), links)
    return text, None


def citation_line(c: Citation, language: Language) -> str:
    where = c.url or c.source
    page = ""
    if c.page is not None:
        page = f", trang {c.page}" if language == "vi" else f", page {c.page}"
    return f"[{c.n}] {c.title} — {where}{page}"
