"""OCR of a PDF page with Tesseract, run as a command (`vie+eng`, 300 DPI by default).

A page is rendered at the OCR resolution unless that would exceed `OcrOptions.max_pixels`: then
at the resolution that fits (`render_zoom`), so a poster-sized page (7,000 pt square is 850 Mpx at
300 DPI) costs no more memory, in this process or in Tesseract's, than an A3 scan. The image is
handed to Tesseract as PNG and released before the next page is rendered.

Tesseract is run as a command (Debian `tesseract-ocr tesseract-ocr-vie`, see scripts/setup.sh)
rather than through MuPDF's built-in OCR: on the PTIT scans MuPDF's OCR text page lost most
diacritics and word spaces ("CONGNGHE", "Bộtrưởng BộGiáo") where the command kept them. Without
Tesseract `ocr_page` raises `OcrUnavailableError` and says why, each problem logged once.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from bot.core.errors import OcrUnavailableError

if TYPE_CHECKING:
    import pymupdf

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OcrOptions:
    """When a page is OCR'd, and how Tesseract is run."""

    enabled: bool = True
    languages: str = "vie+eng"
    dpi: int = 300
    # A layer shorter than this (stripped) is a scan with at most a page number or a stamp.
    min_chars: int = 50
    # Clean text layers of the PTIT and UIT PDFs score 0.9 or more; garbled ones below 0.5.
    min_quality: float = 0.7
    command: str = "tesseract"
    # The longest one page may take; a file's pages share `budget_s` (retrieval.loading.pdf).
    timeout_s: float = 120.0
    # The most pixels a page is rendered at (the DPI is lowered to fit), and the seconds of OCR
    # one file may spend in all.
    max_pixels: int = 25_000_000
    budget_s: float = 120.0


@dataclass(frozen=True)
class OcrReading:
    """What Tesseract read on a page, and the size and resolution of the image it was given."""

    text: str
    width: int
    height: int
    dpi: int


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


def render_zoom(rect: pymupdf.Rect, options: OcrOptions) -> float:
    """The scale (pixels per point) a page of `rect` is rendered at: `options.dpi`, or less when
    the image would exceed `options.max_pixels`."""
    zoom = options.dpi / 72
    # Pixmaps round each side outwards, hence the pixel of margin on both sides.
    width, height = max(rect.width, 1.0), max(rect.height, 1.0)
    if (width * zoom + 1) * (height * zoom + 1) > options.max_pixels:
        zoom = math.sqrt(options.max_pixels / (width * height)) * 0.999
        while (math.ceil(width * zoom) + 1) * (math.ceil(height * zoom) + 1) > options.max_pixels:
            zoom *= 0.99
    return zoom


def ocr_page(page: pymupdf.Page, options: OcrOptions, *, timeout_s: float) -> OcrReading:
    """Tesseract's text of `page`, given at most `timeout_s` (`subprocess.TimeoutExpired`)."""
    languages, problem = _tesseract_languages(options.command, options.languages)
    if problem:
        raise OcrUnavailableError(problem)
    zoom = render_zoom(page.rect, options)
    dpi = max(1, round(zoom * 72))
    import pymupdf  # with the first page read: see retrieval.loading.pdf.mupdf

    matrix = pymupdf.Matrix(zoom, zoom)  # type: ignore[no-untyped-call]
    pixmap = page.get_pixmap(matrix=matrix, colorspace=pymupdf.csGRAY)
    width, height = pixmap.width, pixmap.height
    png: bytes = pixmap.tobytes("png")  # type: ignore[no-untyped-call]
    del pixmap  # only the PNG is kept while Tesseract runs
    # Tesseract's OpenMP threads make one page 7x slower on two cores (13.7 s vs 1.9 s at
    # 300 DPI); the child inherits the environment with that one variable set.
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    command = [options.command, "stdin", "stdout", "-l", languages, "--dpi", str(dpi)]
    # On timeout `run` kills Tesseract before raising: nothing is left running.
    result = subprocess.run(  # noqa: S603 - the configured Tesseract binary, fixed arguments
        command, input=png, capture_output=True, timeout=timeout_s, env=env, check=False
    )
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"tesseract exit {result.returncode}: {' '.join(message[-2:])}")
    return OcrReading(result.stdout.decode("utf-8", "replace"), width, height, dpi)
