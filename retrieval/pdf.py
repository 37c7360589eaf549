"""PDF pages in, text out: the text layer when it reads well, Tesseract OCR when it does not.

Vietnamese regulations often arrive as scans with no text layer, or with a layer that cannot be
read: an English-only OCR pass that strips the diacritics and reads letters as digits ("C6ng tric
sinh vi6n", "Didu 1"), or text in a legacy 8-bit font encoding (TCVN3 "c«ng t¸c sinh viªn", VNI
"coâng taùc"). Each page's layer is scored with `text_quality`; a short (< 50 characters) or
low-scoring layer is OCR'd with Tesseract (`vie+eng`, 300 DPI) and the better-scoring text kept.
`meta["pages"]` records, per page, which text was used, both scores and why a page is empty.

Tesseract is run as a command (Debian `tesseract-ocr tesseract-ocr-vie`, see scripts/setup.sh)
rather than through MuPDF's built-in OCR: on the PTIT scans MuPDF's OCR text page lost most
diacritics and word spaces ("CONGNGHE", "Bộtrưởng BộGiáo") where the command kept them. Without
Tesseract the layer is kept and a warning logged once; nothing crashes.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
import shutil
import subprocess
import time
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pymupdf

from bot.core.errors import IngestError, OcrUnavailableError
from retrieval.loaders import LoadedDocument, Section, _prettify_stem, _tidy, guess_language
from retrieval.text import detect_language

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OcrOptions:
    enabled: bool = True
    languages: str = "vie+eng"
    dpi: int = 300
    # A layer shorter than this (stripped) is a scan with at most a page number or a stamp.
    min_chars: int = 50
    # Clean text layers of the PTIT and UIT PDFs score 0.9 or more; garbled ones below 0.5.
    min_quality: float = 0.7
    command: str = "tesseract"
    timeout_s: float = 120.0


# --- text quality --------------------------------------------------------------------------------

_TONES = ("", "\u0300", "\u0301", "\u0309", "\u0303", "\u0323")
_VOWELS = "aăâeêioôơuưy"
_VI_LETTERS = frozenset(
    "abcdefghijklmnopqrstuvwxyzđ"
    + "".join(unicodedata.normalize("NFC", v + t) for v in _VOWELS for t in _TONES)
)
_TONE_MARKS = frozenset(_TONES[1:])
# A Vietnamese syllable with its tone mark removed: initial, vowel nucleus, final. The nuclei
# keep their circumflex, breve and horn, so VNI's "coâng" (công) and "veà" (về) fail: no nucleus
# has "â" after "o", or is "ea".
_NUCLEI = [
    "iêu",
    "yêu",
    "oai",
    "oay",
    "oeo",
    "uây",
    "uôi",
    "uya",
    "uyê",
    "uyu",
    "ươi",
    "ươu",
    "ai",
    "ao",
    "au",
    "ay",
    "âu",
    "ây",
    "eo",
    "êu",
    "ia",
    "iê",
    "iu",
    "oa",
    "oă",
    "oe",
    "oi",
    "ôi",
    "ơi",
    "ua",
    "uâ",
    "uê",
    "ui",
    "uô",
    "uơ",
    "uy",
    "ưa",
    "ưi",
    "ươ",
    "ưu",
    "yê",
    "a",
    "ă",
    "â",
    "e",
    "ê",
    "i",
    "o",
    "ô",
    "ơ",
    "u",
    "ư",
    "y",
]
_VI_SYLLABLE = re.compile(
    r"(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?"
    f"(?:{'|'.join(_NUCLEI)})"
    r"(?:ch|ng|nh|[cmnpt])?"
)
_EDGE_PUNCTUATION = "\"'()[]{}<>.,;:!?…“”‘’«»-–—*•"
# Codes and numbers are not words: "08/2022/TT-BGDĐT", "7480201", "A00", "297/TB-HV".
_CODE = re.compile(r"[0-9A-ZĐ]+(?:[-/.,:][0-9A-ZĐ]+)*")
# Lowercase units and times after a number: "15h30", "8h", "2km", "10%".
_UNIT = re.compile(r"\d+(?:h\d*|g|km|m|cm|kg|ph|tr|st|nd|rd|th)")
_JOINERS = frozenset("-/.'’")
_MIN_WORDS_FOR_MARKS = 8
# Vietnamese prose carries a mark on most syllables (~70 % in the corpus); an English-only OCR
# pass keeps almost none. Below this share the text reads as Vietnamese stripped of its marks.
_EXPECTED_MARKED_SHARE = 0.3


def _is_clean_word(word: str) -> bool:
    """A word spelt with the Vietnamese alphabet (English included), shaped like a syllable if
    it carries Vietnamese marks, with no digit or symbol inside and no capital after a small
    letter - the traces of English OCR ("vi6n"), TCVN3 ("vÒ", "c«ng") or VNI ("ñeán")."""
    lower = word.lower()
    if any(ch not in _VI_LETTERS and ch not in _JOINERS for ch in lower):
        return False
    if any(a.islower() and b.isupper() for a, b in itertools.pairwise(word)):
        return False
    if lower.isascii():
        return True
    decomposed = unicodedata.normalize("NFD", lower)
    if sum(ch in _TONE_MARKS for ch in decomposed) > 1:
        return False
    toneless = unicodedata.normalize(
        "NFC", "".join(ch for ch in decomposed if ch not in _TONE_MARKS)
    ).replace("đ", "d")
    return all(_VI_SYLLABLE.fullmatch(part) for part in re.split(r"[-/.'’]+", toneless) if part)


def text_quality(text: str) -> float:
    """How readable extracted text is, from 0 (nothing readable) to 1 (clean prose).

    The score is the share of word tokens (whitespace-separated, edge punctuation stripped,
    holding a letter; codes such as "08/2022/TT-BGDĐT" and numbers with units are left out) that
    are clean words (see `_is_clean_word`). When the text reads as Vietnamese (by
    `retrieval.text.detect_language`) and has at least 8 words, it is multiplied by
    0.5 + 0.5 * min(1, marked share / 0.3): Vietnamese with (almost) no diacritics is an
    English-only OCR layer even where each word is spelt plausibly ("tric sinh dinh").

    Samples: clean Vietnamese ~1.0; "C6ng tric sinh vi6n Didu 1 Quyh dinh si5" ~0.3;
    TCVN3 "Quy ®Þnh vÒ c«ng t¸c sinh viªn" ~0.15.
    """
    words: list[str] = []
    for token in text.split():
        token = token.strip(_EDGE_PUNCTUATION)
        if not any(ch.isalpha() for ch in token):
            continue
        if _CODE.fullmatch(token) and (not token.isalpha() or len(token) <= 1):
            continue
        if _UNIT.fullmatch(token):
            continue
        words.append(unicodedata.normalize("NFC", token))
    if not words:
        return 0.0
    clean = sum(_is_clean_word(word) for word in words)
    score = clean / len(words)
    if len(words) >= _MIN_WORDS_FOR_MARKS and detect_language(" ".join(words)) == "vi":
        marked = sum(not word.isascii() for word in words) / len(words)
        score *= 0.5 + 0.5 * min(1.0, marked / _EXPECTED_MARKED_SHARE)
    return round(score, 3)


# --- OCR -----------------------------------------------------------------------------------------


@cache
def _tesseract_languages(command: str, wanted: str) -> tuple[str, str]:
    """The installed subset of `wanted` ("vie+eng") and, if none, why; each problem logged once."""
    binary = shutil.which(command)
    if binary is None:
        log.warning("%s not found: scanned PDF pages will not be OCR'd", command)
        return "", f"{command} not installed"
    listed = subprocess.run(  # noqa: S603 - the configured Tesseract binary, fixed arguments
        [binary, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
    )
    installed = {line.strip() for line in listed.stdout.splitlines()[1:] if line.strip()}
    usable = [lang for lang in wanted.split("+") if lang in installed]
    if len(usable) < len(wanted.split("+")):
        log.warning("Tesseract lacks some of %s (installed: %s)", wanted, sorted(installed))
    if not usable:
        return "", f"no Tesseract data for {wanted}"
    return "+".join(usable), ""


def _ocr_page(page: pymupdf.Page, options: OcrOptions) -> str:
    languages, problem = _tesseract_languages(options.command, options.languages)
    if problem:
        raise OcrUnavailableError(problem)
    pixmap = page.get_pixmap(dpi=options.dpi, colorspace=pymupdf.csGRAY)
    png: bytes = pixmap.tobytes("png")  # type: ignore[no-untyped-call]
    # Tesseract's OpenMP threads make one page 7x slower on two cores (13.7 s vs 1.9 s at
    # 300 DPI); the child inherits the environment with that one variable set.
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    command = [options.command, "stdin", "stdout", "-l", languages, "--dpi", str(options.dpi)]
    result = subprocess.run(  # noqa: S603 - the configured Tesseract binary, fixed arguments
        command, input=png, capture_output=True, timeout=options.timeout_s, env=env, check=False
    )
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"tesseract exit {result.returncode}: {' '.join(message[-2:])}")
    return result.stdout.decode("utf-8", "replace")


# --- pages ---------------------------------------------------------------------------------------

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_DOT_LEADER = re.compile(r"(?:[ \t]*[.…·_]){4,}[ \t]*")
# Scanner and template names that PDF producers leave in the title field.
_JUNK_PDF_TITLE = re.compile(r"^\S*\d\S*$|\btemplate\b|\buntitled\b|^microsoft word\b", re.I)
# Vietnamese official documents open with the agency and the national motto; the title is the
# line that starts with the document type.
_DOCUMENT_TYPES = re.compile(
    r"^(THÔNG BÁO|QUYẾT ĐỊNH|HƯỚNG DẪN|KẾ HOẠCH|ĐỀ ÁN|CÔNG VĂN|BÁO CÁO|QUY CHẾ|QUY ĐỊNH|TỜ TRÌNH)\b"
)
_TITLE_MAX_CHARS = 120
_PDF_TITLE_MAX_CHARS = 160


def load_pdf(path: Path, *, ocr: OcrOptions | None = None) -> LoadedDocument:
    """Read one PDF, OCR'ing pages whose text layer falls short; `IngestError` if unusable."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path.name}: cannot read ({exc.strerror or exc})") from exc
    title, sections, meta = parse_pdf(path, raw, ocr or OcrOptions())
    body = "\n".join(section.text for section in sections)
    return LoadedDocument(
        source=str(path),
        title=title,
        url=None,
        language=guess_language(title + "\n" + body),
        content_hash=hashlib.sha256(raw).hexdigest(),
        sections=tuple(sections),
        meta=meta,
    )


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
    return title or _prettify_stem(path.stem), sections, meta


def _clean(page_text: str) -> str:
    return _tidy([_pdf_line(line) for line in page_text.split("\n")])


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
            ocr_text = _clean(_ocr_page(page, options))
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
    return first if len(first) <= _TITLE_MAX_CHARS else ""
