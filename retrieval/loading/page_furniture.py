"""What a PDF prints around each page's text: page numbers and running headers and footers.

A line printed at the top or bottom of most pages ("Tài liệu hướng dẫn sử dụng" over each of the
24 pages of PTIT's registration guide, "3/24" under it) says nothing about the page it is on:
left in, it joins the sentence above or below it, counts in the search of every chunk, and may
be quoted as an answer. Only the loader sees every page of a document, so it drops them here:

- `strip_page_numbers`: a first or last line of a page that is only its number ("3", "3/24",
  "- 3 -", "Trang 3", "Page 3 of 10");
- `drop_running_lines`: the lines among the first and last ``EDGE_LINES`` of a page that the
  same position holds on at least half of the pages (``MIN_PAGES`` at least), digits aside
  ("Trang 3" and "Trang 4" are one line).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

EDGE_LINES = 3  # lines at the top and at the bottom of a page where running lines are looked for
MIN_PAGES = 3  # pages a line must be on to be a running line
_PAGE_NUMBER = re.compile(
    r"^(?:(?:trang|page)\s*)?[-–—(]?\s*\d{1,4}\s*(?:(?:/|of|trên)\s*\d{1,4})?\s*[-–—)]?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")


def is_page_number(line: str) -> bool:
    return bool(_PAGE_NUMBER.match(line.strip()))


def strip_page_numbers(lines: list[str]) -> list[str]:
    """``lines`` (one page) without the page number printed first or last on it."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    edges = {filled[0], filled[-1]} if filled else set()
    return [line for i, line in enumerate(lines) if i not in edges or not is_page_number(line)]


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).casefold())


def _edges(text: str) -> list[tuple[int, str]]:
    """The positions (0, 1, … from the top; -1, -2, … from the bottom) and keys of a page's
    first and last ``EDGE_LINES`` lines that hold text."""
    lines = [line for line in text.split("\n") if line.strip()]
    top = [(i, _key(line)) for i, line in enumerate(lines[:EDGE_LINES])]
    bottom = [(-1 - i, _key(line)) for i, line in enumerate(reversed(lines[-EDGE_LINES:]))]
    return top + bottom


def drop_running_lines(pages: Sequence[str]) -> tuple[list[str], list[str]]:
    """``pages`` without their running headers and footers, and those lines (as first seen)."""
    filled = [text for text in pages if text.strip()]
    at_least = max(MIN_PAGES, (len(filled) + 1) // 2)
    seen = Counter(entry for text in filled for entry in set(_edges(text)))
    running = {key for (_, key), n in seen.items() if n >= at_least}
    if not running:
        return list(pages), []
    kept: list[str] = []
    found: dict[str, str] = {}
    for text in pages:
        lines = text.split("\n")
        filled_at = [i for i, line in enumerate(lines) if line.strip()]
        edge = set(filled_at[:EDGE_LINES] + filled_at[-EDGE_LINES:])
        out = []
        for i, line in enumerate(lines):
            if i in edge and _key(line) in running:
                found.setdefault(_key(line), line.strip())
                continue
            out.append(line)
        kept.append("\n".join(out).strip("\n"))
    return kept, list(found.values())
