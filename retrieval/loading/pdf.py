"""PDF files: one section per page, the text layer when it reads well, Tesseract OCR when not.

Vietnamese regulations often arrive as scans with no text layer, or with a layer that cannot be
read (`retrieval.loading.quality`). Each page's layer is scored with `text_quality`; a short (< 50
characters) or low-scoring layer is OCR'd (`retrieval.loading.ocr`) and the better-scoring text
kept. `meta["pages"]` records, per page, which text was used, both scores and why a page is
empty. Without Tesseract the layer is kept and a warning logged once; nothing crashes.
"""

from __future__ import annotations

import logging
import re
import subprocess
import time
import unicodedata
from pathlib import Path
from typing import Any

import pymupdf

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
from retrieval.loading.quality import text_quality

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


def load_pdf(path: Path, *, ocr: OcrOptions | None = None) -> LoadedDocument:
    """Read one PDF, OCR'ing pages whose text layer falls short; `IngestError` if unusable."""
    raw = read_bytes(path)
    title, sections, meta = parse_pdf(path, raw, ocr or OcrOptions())
    return loaded_document(path, raw, ParsedDocument(title, sections, meta=meta))


def read_pdf(path: Path, raw: bytes) -> ParsedDocument:
    """A PDF file's bytes, read with the default OCR options; a web page saved under a .pdf name
    (seen in the wild) is read for what it is."""
    if b"%PDF-" not in raw[:1024] and looks_like_html(raw):
        parsed = read_html(path, raw)
        parsed.meta["declared_suffix"] = path.suffix.lower()
        return parsed
    title, sections, meta = parse_pdf(path, raw, OcrOptions())
    return ParsedDocument(title, sections, meta=meta)


def parse_pdf(path: Path, raw: bytes, ocr: OcrOptions) -> tuple[str, list[Section], dict[str, Any]]:
    """Title, one section per page with text (1-based page numbers) and meta of a PDF's bytes."""
    if b"%PDF-" not in raw[:1024]:
        raise IngestError(f"{path.name}: not a PDF (no %PDF header)")
    try:
        with pymupdf.open(stream=raw, filetype="pdf") as pdf:  # type: ignore[no-untyped-call]
            if pdf.needs_pass:
                raise IngestError(f"{path.name}: encrypted PDF (a password is needed)")
            if pdf.is_repaired and b"%%EOF" not in raw[-1024:]:
                # MuPDF "repairs" a cut-off file into pages of garbage text: refuse it instead.
                raise IngestError(f"{path.name}: truncated PDF (no %%EOF; MuPDF had to repair it)")
            metadata_title = ((pdf.metadata or {}).get("title") or "").strip()
            repaired = bool(pdf.is_repaired)
            started = time.perf_counter()
            pages = [_page_text(page, number, ocr) for number, page in enumerate(pdf, start=1)]
            seconds = time.perf_counter() - started
    # FileDataError is a RuntimeError; errors raised from inside MuPDF derive from FzErrorBase.
    except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase) as exc:
        raise IngestError(f"{path.name}: corrupt PDF ({exc})") from exc
    if not pages:
        raise IngestError(f"{path.name}: PDF has no pages")
    sections = [Section((), text, page=n) for n, (text, _) in enumerate(pages, start=1) if text]
    records = [record for _, record in pages]
    title = metadata_title if _plausible_pdf_title(metadata_title, path.stem) else ""
    if not title and sections and sections[0].page == 1:
        title = _first_page_title(sections[0].text)
    meta: dict[str, Any] = {
        "format": "pdf",
        "page_count": len(pages),
        "pages_without_text": [r["page"] for r in records if r["source"] == "empty"],
        "pages": records,
        "ocr_pages": sum(1 for r in records if "ocr_quality" in r),
        "seconds": round(seconds, 2),
    }
    if repaired:
        meta["repaired"] = True
    return title or prettify_stem(path.stem), sections, meta


def _clean(page_text: str) -> str:
    return tidy_lines([_pdf_line(line) for line in page_text.split("\n")])


def _readable(text: str) -> bool:
    # A page showing only a printed page number has nothing to index.
    return any(ch.isalpha() for ch in text)


def _page_text(page: pymupdf.Page, number: int, options: OcrOptions) -> tuple[str, dict[str, Any]]:
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
    if not options.enabled:
        reason = f"{why}; OCR disabled"
    else:
        try:
            ocr_text = _clean(ocr_page(page, options))
        except OcrUnavailableError as exc:
            reason = f"{why}; OCR unavailable ({exc})"
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            log.warning("OCR of page %d failed: %s", number, exc)
            reason = f"{why}; OCR failed ({exc})"
        else:
            record["ocr_chars"] = len(ocr_text)
            record["ocr_quality"] = text_quality(ocr_text)
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
