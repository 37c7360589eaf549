"""OCR of a PDF page with Tesseract, run as a command (`vie+eng`, 300 DPI by default).

Tesseract is run as a command (Debian `tesseract-ocr tesseract-ocr-vie`, see scripts/setup.sh)
rather than through MuPDF's built-in OCR: on the PTIT scans MuPDF's OCR text page lost most
diacritics and word spaces ("CONGNGHE", "Bộtrưởng BộGiáo") where the command kept them. Without
Tesseract `ocr_page` raises `OcrUnavailableError` and says why, each problem logged once.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

import pymupdf

from bot.core.errors import OcrUnavailableError

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
    timeout_s: float = 120.0


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


def ocr_page(page: pymupdf.Page, options: OcrOptions) -> str:
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
