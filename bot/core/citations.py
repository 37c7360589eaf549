"""How a reply names its sources: written by the answer ("[1] Học phí 2026 — https://…"), read
back by the channels, which show the ones with a web address as buttons.

What a student sees of a source is its title and its public web address, never where the file
lies on the server: a document's ``source`` is its path there (an upload, a folder ingested),
and a title that is a path (an FAQ entry drafted from an untitled file) shows as the file's
name (``shown_name``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.core.types import Language


@dataclass(frozen=True)
class Citation:
    n: int
    title: str
    source: str
    url: str | None
    page: int | None
    chunk_id: int | None = None
    year: int | None = None  # the year the document speaks of, when its title does not say


# The headings of a reply's source lists, by language: written by ``sources_block`` and
# ``related_block``, read back by ``source_links`` (channels show them as buttons).
SOURCES_HEADING = {"vi": "Nguồn:", "en": "Sources:"}
RELATED_HEADING = {"vi": "Có thể liên quan:", "en": "Possibly related:"}
_WEB_ADDRESS = re.compile(r"^https?://", re.IGNORECASE)
# "/srv/kb/a.pdf", "~/kb/a.md", "C:\\kb\\a.docx", "./a.md", "../kb/a.md", "\\\\host\\kb\\a.pdf"
_ROOTED_PATH = re.compile(r"^(?:[/\\~]|[A-Za-z]:[/\\]|\.{1,2}[/\\])")
# "kb/hoc-phi.md": no space, a separator, and a file extension at the end.
_RELATIVE_PATH = re.compile(r"^[^\s]*[/\\][^\s/\\]+\.[A-Za-z0-9]{1,5}$")
# "hoc-phi-2026.md", "De an 2026.PDF": a file's name alone, by the extensions documents have.
_FILE_NAME = re.compile(
    r"^[^/\\]+\.(?:md|markdown|txt|html?|pdf|csv|docx?|xlsx?|pptx?|odt|rtf|jsonl?|ya?ml)$",
    re.IGNORECASE,
)
# A citation marker in a reply's text: "[2]".
MARKER = re.compile(r"\[(\d+)\]")
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


def shown_name(text: str) -> str:
    """``text`` (a title or a source) as a reader may see it: a web address or a title as it
    is, a file path as the file's name, without its folders."""
    text = text.strip()
    if _WEB_ADDRESS.match(text):
        return text
    if _ROOTED_PATH.match(text) or _RELATIVE_PATH.match(text):
        return re.split(r"[/\\]", text.rstrip("/\\"))[-1]
    return text


def names_file(text: str) -> bool:
    """Whether ``text`` is where a file lies (a path, or a file's name alone) rather than a
    title or a web address: what a student is never shown as a source."""
    text = text.strip()
    if not text or _WEB_ADDRESS.match(text):
        return False
    return bool(_ROOTED_PATH.match(text) or _RELATIVE_PATH.match(text) or _FILE_NAME.match(text))


def public_url(url: str | None) -> str | None:
    """A source's address if it is a web address (never a ``file:`` one), else None."""
    return url if url and _WEB_ADDRESS.match(url.strip()) else None


def citation_label(title: str, source: str) -> str:
    """What a source is called in a reply: its title, or else its file's name."""
    return shown_name(title) or shown_name(source)


def public_citation(c: Citation | dict[str, Any]) -> dict[str, Any]:
    """A citation as the public gets it (web chat, ``/api/ask``): number, title, web address,
    page; never the server's path of the file. Takes a ``Citation`` or its stored form."""
    if isinstance(c, Citation):
        n, title, source, url, page = c.n, c.title, c.source, c.url, c.page
    else:
        n, title, url, page = c["n"], str(c.get("title") or ""), c.get("url"), c.get("page")
        source = str(c.get("source") or "")
    return {
        "n": n,
        "title": citation_label(title, source),
        "url": public_url(url),
        "page": page,
    }


def citation_line(c: Citation, language: Language) -> str:
    """ "[1] Học phí 2026 — https://…, trang 3" (or without the address, for a file)."""
    page = ""
    if c.page is not None:
        page = f", trang {c.page}" if language == "vi" else f", page {c.page}"
    url = public_url(c.url)
    where = f" — {url}" if url else ""
    label = citation_label(c.title, c.source)
    if c.year is not None and str(c.year) not in label:
        # a passage quoted from last year's notice says so, though its sentence names no year
        label += f" (năm {c.year})" if language == "vi" else f" ({c.year})"
    return f"[{c.n}] {label}{where}{page}"
