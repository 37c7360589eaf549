"""PDF files: one section per page, the text layer when it reads well, Tesseract OCR when not.

Vietnamese regulations often arrive as scans with no text layer, or with a layer that cannot be
read (`retrieval.loading.quality`). Each page's layer is scored with `text_quality`; a short (< 50
characters) or low-scoring layer is OCR'd (`retrieval.loading.ocr`) and the better-scoring text
kept. `meta["pages"]` records, per page, which text was used, both scores and why a page is
empty. Without Tesseract the layer is kept and a warning logged once; nothing crashes. The
tables of pages read from their text layer are kept in `meta["tables"]`
(`retrieval.loading.pdf_tables`) for the facts reader.

Hostile files are read as far as they are good (`PdfOptions`): pages past `max_pages` are not
read; a page MuPDF cannot load or read is skipped; once the file's OCR budget is spent, the
remaining pages keep their text layer. Every page not read in full is logged and listed in
`meta["skipped_pages"]` (page number and why), which the index stores with the document.

A page's text is then made of its author's lines rather than the layout's: page numbers and
running headers and footers are dropped (`retrieval.loading.page_furniture`, listed in
`meta["running_lines"]`), and lines the layout broke in mid-sentence are joined, numbers cut at a
thousands dot closed up (`retrieval.text.wrapping`). This is done here rather than when the
answerer cuts a passage into units: the chunker ends chunks between lines, so a sentence broken
over two lines could fall into two chunks and no later step could mend it, and search embeds the
whole sentence instead of two halves. Only the loader knows that a PDF's line breaks are the
layout's (a Markdown page's are its author's) and sees every page, which running lines need.
"""

from __future__ import annotations

import logging
import re
import subprocess
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from bot.core.errors import IngestError, OcrUnavailableError
from retrieval.loading.document import (
    TITLE_MAX_CHARS,
    LoadedDocument,
    ParsedDocument,
    Section,
    loaded_document,
    prettify_stem,
    read_bytes,
    tidy_lines,
)
from retrieval.loading.html import looks_like_html, read_html
from retrieval.loading.ocr import OcrOptions, ocr_page
from retrieval.loading.page_furniture import drop_running_lines, strip_page_numbers
from retrieval.loading.pdf_tables import page_tables
from retrieval.loading.quality import text_quality
from retrieval.text.wrapping import close_thousands, join_wrapped

if TYPE_CHECKING:
    import pymupdf

log = logging.getLogger(__name__)

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_DOT_LEADER = re.compile(r"(?:[ \t]*[.…·_]){4,}[ \t]*")
# Scanner and template names that PDF producers leave in the title field.
_JUNK_PDF_TITLE = re.compile(r"^\S*\d\S*$|\btemplate\b|\buntitled\b|^microsoft word\b", re.I)
# Vietnamese official documents open with the agency and the national motto; the title is the
# line that starts with the document type.
_DOCUMENT_TYPES = re.compile(
    r"^(THÔNG BÁO|QUYẾT ĐỊNH|HƯỚNG DẪN|KẾ HOẠCH|ĐỀ ÁN|CÔNG VĂN|BÁO CÁO|QUY CHẾ|QUY ĐỊNH|TỜ TRÌNH)\b"
)
_PDF_TITLE_MAX_CHARS = 160
OCR_BUDGET_SPENT = "OCR time budget spent"
_UNREADABLE = "unreadable page"


def mupdf() -> ModuleType:
    """MuPDF, imported with the first PDF read: its import loads its layout models (about half
    a second, and onnxruntime's thread pools), which a process that reads no PDF (``serve``, a
    command, a worker answering) should not pay."""
    import pymupdf

    return pymupdf


def _mupdf_errors() -> tuple[type[BaseException], ...]:
    # FileDataError is a RuntimeError; errors raised from inside MuPDF derive from FzErrorBase.
    return (RuntimeError, ValueError, mupdf().mupdf.FzErrorBase)


@dataclass(frozen=True)
class PdfOptions:
    """How much of a PDF is read: at most `max_pages` pages, OCR'd as `ocr` says."""

    max_pages: int = 500
    ocr: OcrOptions = field(default_factory=OcrOptions)


def load_pdf(
    path: Path, *, ocr: OcrOptions | None = None, options: PdfOptions | None = None
) -> LoadedDocument:
    """Read one PDF, OCR'ing pages whose text layer falls short; `IngestError` if unusable."""
    options = options or PdfOptions()
    if ocr is not None:
        options = PdfOptions(options.max_pages, ocr)
    raw = read_bytes(path)
    title, sections, meta = parse_pdf(path, raw, options)
    return loaded_document(path, raw, ParsedDocument(title, sections, meta=meta))


def read_pdf(path: Path, raw: bytes, options: PdfOptions | None = None) -> ParsedDocument:
    """A PDF file's bytes, read as `options` says (the defaults if None); a web page saved
    under a .pdf name (seen in the wild) is read for what it is."""
    if b"%PDF-" not in raw[:1024] and looks_like_html(raw):
        parsed = read_html(path, raw)
        parsed.meta["declared_suffix"] = path.suffix.lower()
        return parsed
    title, sections, meta = parse_pdf(path, raw, options or PdfOptions())
    return ParsedDocument(title, sections, meta=meta)


def parse_pdf(
    path: Path, raw: bytes, options: PdfOptions
) -> tuple[str, list[Section], dict[str, Any]]:
    """Title, one section per page with text (1-based page numbers) and meta of a PDF's bytes."""
    if b"%PDF-" not in raw[:1024]:
        raise IngestError(f"{path.name}: not a PDF (no %PDF header)")
    try:
        with mupdf().open(stream=raw, filetype="pdf") as pdf:
            if pdf.needs_pass:
                raise IngestError(f"{path.name}: encrypted PDF (a password is needed)")
            if pdf.is_repaired and b"%%EOF" not in raw[-1024:]:
                # MuPDF "repairs" a cut-off file into pages of garbage text: refuse it instead.
                raise IngestError(f"{path.name}: truncated PDF (no %%EOF; MuPDF had to repair it)")
            metadata_title = ((pdf.metadata or {}).get("title") or "").strip()
            repaired = bool(pdf.is_repaired)
            page_count = pdf.page_count
            started = time.perf_counter()
            records = _read_pages(path, pdf, options)
            seconds = time.perf_counter() - started
    except _mupdf_errors() as exc:
        raise IngestError(f"{path.name}: corrupt PDF ({exc})") from exc
    if not page_count:
        raise IngestError(f"{path.name}: PDF has no pages")
    if all(str(r.get("reason", "")).startswith(_UNREADABLE) for r in records):
        raise IngestError(f"{path.name}: corrupt PDF (no page can be read: {records[0]['reason']})")
    tables = [
        {"page": r["page"], **table} for r in records for table in r.pop("tables", None) or ()
    ]
    texts, running = drop_running_lines([record.pop("text") for record in records])
    texts = [_paragraphs(text) for text in texts]
    sections = [Section((), t, page=r["page"]) for r, t in zip(records, texts, strict=True) if t]
    title = metadata_title if _plausible_pdf_title(metadata_title, path.stem) else ""
    if not title and sections and sections[0].page == 1:
        title = _first_page_title(sections[0].text)
    skipped = [r for r in records if r.get("skipped")]
    meta: dict[str, Any] = {
        "format": "pdf",
        "page_count": page_count,
        "pages_without_text": [r["page"] for r in records if r["source"] == "empty"],
        "pages": records,
        "ocr_pages": sum(1 for r in records if "ocr_quality" in r),
        "seconds": round(seconds, 2),
    }
    if skipped or page_count > options.max_pages:
        meta["skipped_pages"] = [{"page": r["page"], "reason": r["reason"]} for r in skipped]
    if page_count > options.max_pages:
        meta["pages_over_limit"] = page_count - options.max_pages
    if running:
        meta["running_lines"] = running
    if tables:
        meta["tables"] = tables
    if repaired:
        meta["repaired"] = True
    return title or prettify_stem(path.stem), sections, meta


def _read_pages(path: Path, pdf: pymupdf.Document, options: PdfOptions) -> list[dict[str, Any]]:
    """Each page's record (its text under "text"), up to `options.max_pages`; a page MuPDF
    cannot read is skipped with a record that says why."""
    budget = _OcrBudget(options.ocr.budget_s)
    records: list[dict[str, Any]] = []
    for index in range(min(pdf.page_count, options.max_pages)):
        number = index + 1
        try:
            page = pdf.load_page(index)  # type: ignore[no-untyped-call]
            text, record = _page_text(page, number, options.ocr, budget)
            if record["source"] == "layer":
                record["tables"] = _tables(path, page, number)
        except _mupdf_errors() as exc:
            log.warning("%s: page %d skipped, MuPDF cannot read it: %s", path.name, number, exc)
            reason = f"{_UNREADABLE} ({exc})"
            text, record = "", {"page": number, "source": "empty", "skipped": True}
            record.update(quality=0.0, reason=reason)
        records.append({**record, "text": text})
    if pdf.page_count > options.max_pages:
        log.warning(
            "%s: %d pages, only the first %d read (ingest.max_pdf_pages); pages %d-%d skipped",
            path.name,
            pdf.page_count,
            options.max_pages,
            options.max_pages + 1,
            pdf.page_count,
        )
    if budget.spent_on:
        log.warning(
            "%s: OCR budget of %.0f s spent; pages %s kept their text layer unread by OCR",
            path.name,
            options.ocr.budget_s,
            ", ".join(map(str, budget.spent_on)),
        )
    return records


def _tables(path: Path, page: pymupdf.Page, number: int) -> list[dict[str, Any]]:
    """The tables of a page read from its text layer (an OCR'd page's words have no ruling to
    follow); none when MuPDF cannot find them."""
    try:
        return page_tables(page)
    except _mupdf_errors() as exc:
        log.warning("%s: tables of page %d not read: %s", path.name, number, exc)
        return []


class _OcrBudget:
    """The seconds of OCR a file has left, and the pages that found none left."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.spent_on: list[int] = []

    def left(self) -> float:
        return self.deadline - time.monotonic()


def _clean(page_text: str) -> str:
    return tidy_lines(strip_page_numbers([_pdf_line(line) for line in page_text.split("\n")]))


def _paragraphs(page_text: str) -> str:
    """A page's lines joined where the layout broke a sentence, amounts closed up."""
    return tidy_lines([close_thousands(line) for line in join_wrapped(page_text.split("\n"))])


def _readable(text: str) -> bool:
    # A page showing only a printed page number has nothing to index.
    return any(ch.isalpha() for ch in text)


def _page_text(
    page: pymupdf.Page, number: int, options: OcrOptions, budget: _OcrBudget
) -> tuple[str, dict[str, Any]]:
    """The page's text ("" if none is readable) and its record for `meta["pages"]`."""
    layer = _clean(page.get_text("text", sort=True))  # type: ignore[no-untyped-call]
    layer_quality = text_quality(layer)
    record: dict[str, Any] = {"page": number, "layer_chars": len(layer)}
    record["layer_quality"] = layer_quality
    short = len(layer) < options.min_chars
    if not short and layer_quality >= options.min_quality:
        return layer, {**record, "source": "layer", "quality": layer_quality}
    why = "short text layer" if short else "low-quality text layer"
    ocr_text, reason = "", ""
    left = budget.left()
    if not options.enabled:
        reason = f"{why}; OCR disabled"
    elif left <= 0:
        budget.spent_on.append(number)
        reason = f"{why}; {OCR_BUDGET_SPENT}"
        record["skipped"] = True
    else:
        try:
            reading = ocr_page(page, options, timeout_s=min(options.timeout_s, left))
        except OcrUnavailableError as exc:
            reason = f"{why}; OCR unavailable ({exc})"
        except subprocess.TimeoutExpired:
            log.warning("OCR of page %d stopped: out of time", number)
            reason = f"{why}; OCR stopped, out of time"
            record["skipped"] = True
        except (RuntimeError, OSError) as exc:
            log.warning("OCR of page %d failed: %s", number, exc)
            reason = f"{why}; OCR failed ({exc})"
        else:
            ocr_text = _clean(reading.text)
            record["ocr_chars"] = len(ocr_text)
            record["ocr_quality"] = text_quality(ocr_text)
            record["ocr_image"] = [reading.width, reading.height, reading.dpi]
    ocr_quality: float = record.get("ocr_quality", 0.0)
    # A short layer (a page number, a stamp) loses to any longer OCR text; a long but garbled
    # layer loses only to OCR text that scores higher.
    if _readable(ocr_text) and (
        (short and len(ocr_text) > len(layer)) or ocr_quality > layer_quality
    ):
        return ocr_text, {**record, "source": "ocr", "quality": ocr_quality}
    if _readable(layer):
        kept = reason or f"{why}; OCR scored no higher"
        return layer, {**record, "source": "layer", "quality": layer_quality, "reason": kept}
    if not reason:
        reason = "no text layer, and OCR found no text" if short else "no readable text"
    return "", {**record, "source": "empty", "quality": 0.0, "reason": reason}


def _pdf_line(line: str) -> str:
    # sort=True pads lines with spaces to mimic the layout; dot leaders in tables of contents
    # would cost a token per dot. Text layers may hold NULs, control characters and lone
    # surrogates, which PostgreSQL text columns and UTF-8 reject.
    line = _CONTROL_CHARS.sub("", line).encode("utf-8", "replace").decode("utf-8")
    return unicodedata.normalize("NFC", " ".join(_DOT_LEADER.sub(" … ", line).split()))


def _plausible_pdf_title(title: str, stem: str) -> bool:
    def folded(text: str) -> str:
        return re.sub(r"[\W_]+", "", text).casefold()

    return len(title) >= 4 and not _JUNK_PDF_TITLE.search(title) and folded(title) != folded(stem)


def _first_page_title(text: str) -> str:
    lines = text.split("\n")[:40]
    for index, line in enumerate(lines):
        if _DOCUMENT_TYPES.match(line):
            # The title block runs to the next blank line ("THÔNG BÁO" / "V/v ...", wrapped).
            block = [line]
            for following in lines[index + 1 :]:
                if not following:
                    break
                block.append(following)
            title = " ".join(block)
            return title if len(title) <= _PDF_TITLE_MAX_CHARS else line
    first = next((line for line in lines if line), "")
    return first if len(first) <= TITLE_MAX_CHARS else ""
