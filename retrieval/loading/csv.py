"""CSV files: each table (a caption row starts a new one) as sections of at most
`CSV_ROWS_PER_SECTION` rows, every section a Markdown table repeating the header."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from pathlib import Path

from bot.core.errors import IngestError
from retrieval.loading.document import ParsedDocument, Section, decode_text, prettify_stem

CSV_ROWS_PER_SECTION = 25


def read_csv(path: Path, raw: bytes) -> ParsedDocument:
    text = decode_text(path, raw)
    try:
        delimiter = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = ","
    try:
        rows = [
            [cell.strip() for cell in row]
            for row in csv.reader(io.StringIO(text), delimiter=delimiter)
        ]
    except csv.Error as exc:
        raise IngestError(f"{path.name}: malformed CSV ({exc})") from exc
    sections = table_sections(rows)
    return ParsedDocument(
        title=prettify_stem(path.stem),
        url=None,
        sections=sections,
        meta={"format": "csv", "delimiter": delimiter, "rows": len(rows)},
    )


def table_sections(rows: list[list[str]], sheet: str = "") -> list[Section]:
    """A grid of cells as sections of Markdown tables: each table (a caption row starts a new
    one) cut into pieces of at most ``CSV_ROWS_PER_SECTION`` rows that repeat its header, under
    the sheet's name and the caption (also for spreadsheets, retrieval.loading.xlsx)."""
    return [
        Section(tuple(h for h in (sheet, caption) if h), _markdown_table(header, piece))
        for caption, header, body in _csv_tables([row for row in rows if any(row)])
        for piece in _even_pieces(body, CSV_ROWS_PER_SECTION)
    ]


def _csv_tables(rows: list[list[str]]) -> Iterator[tuple[str, list[str], list[list[str]]]]:
    """Split rows into (caption, header, body) tables.

    A row with one filled cell in a wide sheet is a caption ("2024" above that year's cut-off
    scores) and the row after it is that table's header; otherwise the first row is the header.
    """
    width = max(len(row) for row in rows) if rows else 0

    def is_caption(row: list[str]) -> bool:
        return width > 2 and bool(row[0]) and not any(row[1:])

    index = 0
    while index < len(rows):
        caption = ""
        if is_caption(rows[index]) and index + 1 < len(rows):
            caption = rows[index][0]
            index += 1
        header = rows[index]
        end = index + 1
        while end < len(rows) and not is_caption(rows[end]):
            end += 1
        yield caption, header, rows[index + 1 : end]
        index = end


def _even_pieces(rows: list[list[str]], most: int) -> list[list[list[str]]]:
    if not rows:
        return [[]]
    count = math.ceil(len(rows) / most)
    size = math.ceil(len(rows) / count)
    return [rows[start : start + size] for start in range(0, len(rows), size)]


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    used = [
        column
        for column in range(max(len(row) for row in [header, *rows]))
        if any(column < len(row) and row[column] for row in [header, *rows])
    ]

    def render(row: list[str]) -> str:
        cells = [
            row[c].replace("|", "\\|").replace("\n", " ") if c < len(row) else "" for c in used
        ]
        return "| " + " | ".join(cells) + " |"

    lines = [render(header), "| " + " | ".join("---" for _ in used) + " |"]
    lines.extend(render(row) for row in rows)
    return "\n".join(lines)
