"""What every loader makes: a `LoadedDocument` of `Section`s, and the steps loaders share.

A document is a title, an optional source URL and a tuple of `Section`s: runs of Markdown-ish body
text (paragraphs separated by blank lines, list items and table rows on their own lines) under one
heading path. `retrieval.chunking` cuts sections into chunks. A loader reads one format's bytes
into a `ParsedDocument`; `loaded_document` adds what is the same for every format (the source,
the language, the content hash).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.errors import IngestError
from bot.core.types import Language
from retrieval.text.language import detect_language

# A first line longer than this is not a title (the file name is used instead).
TITLE_MAX_CHARS = 120

# The opening line of a fenced code block: its lines are kept as written, never cut apart.
FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


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
    """One source file or page, read: what chunking cuts and the index stores."""

    source: str
    title: str
    url: str | None
    language: str
    content_hash: str
    sections: tuple[Section, ...]
    meta: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass
class ParsedDocument:
    """One file's bytes as read by its format's loader, before `loaded_document` completes it."""

    title: str
    sections: list[Section]
    url: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def loaded_document(path: Path, raw: bytes, parsed: ParsedDocument) -> LoadedDocument:
    """The document `parsed` from `raw`, the bytes of `path`: named by the path, its language
    guessed from its text and its content hash taken over the bytes."""
    body = "\n".join(section.text for section in parsed.sections)
    return LoadedDocument(
        source=str(path),
        title=parsed.title,
        url=parsed.url,
        language=document_language(parsed.title + "\n" + body),
        content_hash=hashlib.sha256(raw).hexdigest(),
        sections=tuple(parsed.sections),
        meta=parsed.meta,
    )


def document_language(text: str) -> Language:
    """A document's language by `detect_language`; English for a text without any evidence (a
    scan with no text), where a question without evidence is taken as Vietnamese."""
    return detect_language(text, unknown="en")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or `IngestError` naming the file."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path.name}: cannot read ({exc.strerror or exc})") from exc


def decode_text(path: Path, raw: bytes) -> str:
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


def tidy_lines(lines: list[str]) -> str:
    """Right-strip lines, collapse runs of blank lines into one, trim blank lines at both ends."""
    out: list[str] = []
    for line in lines:
        line = line.rstrip()
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip("\n")


def trimmed_lines(lines: list[str]) -> str:
    """Right-strip lines and trim blank lines at both ends, keeping inner runs of blank lines."""
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def prettify_stem(stem: str) -> str:
    """A file name as a title: "diem_chuan-2024" -> "Diem chuan 2024", "hocPhi" -> "Hoc Phi"."""
    words = re.sub(r"(?<=[a-zà-ỹ])(?=[A-Z])", " ", re.sub(r"[-_\s]+", " ", stem)).strip()
    return words[:1].upper() + words[1:] if words else stem
