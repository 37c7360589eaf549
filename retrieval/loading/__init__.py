"""Source files in, `LoadedDocument`s out: one module per document type, the dispatcher here.

`load_file` picks the loader by suffix (`LOADERS`); each loader turns a file's bytes into a
`ParsedDocument` (retrieval.loading.document), which `loaded_document` completes. No database.

How much of a PDF is read (pages, pixels per rendered page, OCR time) is `PdfOptions`
(retrieval.loading.pdf), passed by the caller from its settings.

Every failure - unknown suffix, unreadable, empty, binary, truncated or corrupt file - is raised as
`IngestError` naming the file, so an ingestion run can log it and go on with the next one.

Imports: `bot.core` and `retrieval.text`; the modules here import `document` and nothing above it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from bot.core.errors import IngestError
from retrieval.loading.csv import read_csv
from retrieval.loading.document import LoadedDocument, ParsedDocument, loaded_document, read_bytes
from retrieval.loading.docx import read_docx
from retrieval.loading.html import read_html
from retrieval.loading.markdown import read_markdown, read_text
from retrieval.loading.pdf import PdfOptions, read_pdf
from retrieval.loading.xlsx import read_xlsx

LOADERS: dict[str, Callable[[Path, bytes], ParsedDocument]] = {
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".txt": read_text,
    ".html": read_html,
    ".htm": read_html,
    ".pdf": read_pdf,
    ".csv": read_csv,
    ".docx": read_docx,
    ".xlsx": read_xlsx,
}

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(LOADERS)


def load_file(path: Path, pdf: PdfOptions | None = None) -> LoadedDocument:
    """Read one file (a PDF as `pdf` says, the defaults if None), or raise `IngestError`
    naming the file and why it can't be used."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        supported = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise IngestError(
            f"{path.name}: unsupported file type {suffix or '(none)'!r} ({supported})"
        )
    raw = read_bytes(path)
    if not raw.strip():
        raise IngestError(f"{path.name}: empty file")
    parsed = read_pdf(path, raw, pdf) if suffix == ".pdf" else LOADERS[suffix](path, raw)
    if not parsed.sections and not parsed.meta.get("pages_without_text"):
        raise IngestError(f"{path.name}: no text found")
    return loaded_document(path, raw, parsed)


def load_directory(
    path: Path, *, recursive: bool = True, pdf: PdfOptions | None = None
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
            yield file, load_file(file, pdf)
        except IngestError as exc:
            yield file, exc
