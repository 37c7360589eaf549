"""Tables on a PDF page, read as a grid of cell texts for the facts reader.

MuPDF's `find_tables` finds a table's ruled cells, but its own cell texts are made of characters
in layout order, which breaks Vietnamese words apart ("viễ nthông") and runs a packed row's
lines together. So only the geometry is taken from it and every cell's text is made here from
the page's words, each word in the cell that holds its centre, line by line.

The grid's columns are the body's: a published table often has narrow spacer columns and a
header cell spanning several body columns ("Chỉ tiêu" over "BVH" and "BVS"), so each body column
takes the text of every header cell over it, top line first ("Chỉ tiêu BVH"). A cell merged over
several rows ("Xét tuyển 1 trong 4 tổ hợp" for two majors) gives its text to each row it covers.
A row that packs several records into one ruled row (five codes, five names, five quotas one per
line) is split into one row per line only when two columns of figures or codes agree on the
count; otherwise it is kept whole. Nothing else is guessed: a table with fewer than two body
columns or one body row is not returned.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pymupdf

_FIGURE = re.compile(r"^[\d.,]+$|^\d{5}[0-9A-Za-z]{0,3}$")
_MAX_HEADER_ROWS = 3
_LEAD_LINES = 3
_LEAD_GAP = 60.0  # points above a table still read as its caption
# Strokes or boxes a ruled table of two columns and two rows takes at least: MuPDF's search
# (0.15-0.4 s a page) is skipped on pages drawing fewer, most pages of a notice.
_MIN_RULES = 6


@dataclass(frozen=True)
class _Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    line: tuple[int, int]

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2


Box = tuple[float, float, float, float]


def page_tables(page: pymupdf.Page) -> list[dict[str, Any]]:
    """The tables MuPDF finds on ``page``, each as {"header", "rows", "lead"} of plain strings."""
    drawings = page.get_cdrawings()  # type: ignore[no-untyped-call]
    if sum(len(drawing["items"]) for drawing in drawings) < _MIN_RULES:
        return []
    words = [
        _Word(w[0], w[1], w[2], w[3], w[4], (w[5], w[6]))
        for w in page.get_text("words")  # type: ignore[no-untyped-call]
    ]
    found = page.find_tables()  # type: ignore[no-untyped-call]
    boxes = [table.bbox for table in found.tables]
    prose = [word for word in words if not any(_inside(word, box) for box in boxes)]
    tables = []
    for table in found.tables:
        grid = _grid(table, words)
        if grid is not None:
            header, rows = grid
            tables.append({"header": header, "rows": rows, "lead": _lead(table.bbox, prose)})
    return tables


def _inside(word: _Word, box: Box) -> bool:
    x, y = word.centre
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _grid(table: Any, words: list[_Word]) -> tuple[list[str], list[list[str]]] | None:
    rows = [(row.bbox, [cell for cell in row.cells if cell is not None]) for row in table.rows]
    texts = [[_lines(cell, words) for cell in cells] for _, cells in rows]
    headers = 1
    while headers < min(len(rows) - 1, _MAX_HEADER_ROWS) and not any(
        _is_figure(lines) for lines in texts[headers]
    ):
        headers += 1
    body = rows[headers:]
    columns = _columns([cell for _, cells in body for cell in cells])
    if len(columns) < 2 or not body:
        return None
    header = [_header(column, rows[:headers], texts[:headers]) for column in columns]
    cells = [cell for _, row_cells in rows for cell in row_cells]
    records: list[list[str]] = []
    for bbox, row_cells in body:
        # A row's box reaches down to the end of any cell merged over the rows below it.
        middle = (bbox[1] + min(cell[3] for cell in row_cells)) / 2
        lines = [_lines(_covering(cells, column, middle), words) for column in columns]
        if any(lines):
            records.extend(_unpacked(lines))
    if len(records) < 2 or not any(header):
        return None
    return header, records


def _columns(cells: list[Box]) -> list[tuple[float, float]]:
    """The body's columns: the x-spans of its cells, overlapping spans merged."""
    spans = sorted((cell[0], cell[2]) for cell in cells)
    merged: list[tuple[float, float]] = []
    for left, right in spans:
        if merged and left < merged[-1][1] - 1:
            merged[-1] = (merged[-1][0], max(right, merged[-1][1]))
        else:
            merged.append((left, right))
    return merged


def _header(column: tuple[float, float], rows: list[Any], texts: list[list[list[str]]]) -> str:
    """The text of every header cell over ``column``'s centre, top row first."""
    centre = (column[0] + column[1]) / 2
    parts = []
    for (_, cells), lines in zip(rows, texts, strict=True):
        for cell, cell_lines in zip(cells, lines, strict=True):
            if cell[0] <= centre <= cell[2] and cell_lines:
                parts.append(" ".join(cell_lines))
    return " ".join(parts)


def _covering(cells: list[Box], column: tuple[float, float], middle: float) -> Box | None:
    centre = (column[0] + column[1]) / 2
    for cell in cells:
        if cell[0] <= centre <= cell[2] and cell[1] <= middle <= cell[3]:
            return cell
    return None


def _lines(cell: Box | None, words: list[_Word]) -> list[str]:
    """The words whose centre lies in ``cell``, as its lines, top to bottom."""
    if cell is None:
        return []
    lines: dict[tuple[int, int], list[_Word]] = defaultdict(list)
    for word in words:
        if _inside(word, cell):
            lines[word.line].append(word)
    ordered = sorted(lines.values(), key=lambda line: (round(line[0].y0), line[0].x0))
    return [" ".join(w.text for w in sorted(line, key=lambda w: w.x0)) for line in ordered]


def _is_figure(lines: list[str]) -> bool:
    return bool(lines) and all(_FIGURE.match(line.replace(" ", "")) for line in lines)


def _unpacked(lines: list[list[str]]) -> list[list[str]]:
    """One row, or one per line when two columns of figures agree it packs several."""
    counts = [len(cell) for cell in lines if len(cell) > 1 and _is_figure(cell)]
    packed = next((n for n in counts if counts.count(n) >= 2), 0)
    if not packed:
        return [[" ".join(cell) for cell in lines]]
    out = []
    for index in range(packed):
        row = []
        for cell in lines:
            if len(cell) == packed:
                row.append(cell[index])
            elif _is_figure(cell):
                row.append("")  # a count that disagrees: no line can be matched to its row
            else:
                row.append(" ".join(cell))
        out.append(row)
    return out


def _lead(bbox: Any, words: list[_Word]) -> str:
    """Up to three lines of the page's prose (``words`` outside every table) just above it."""
    top = bbox[1]
    above: dict[tuple[int, int], list[_Word]] = defaultdict(list)
    for word in words:
        if top - _LEAD_GAP <= word.y1 <= top + 1 and word.centre[1] < top:
            above[word.line].append(word)
    ordered = sorted(above.values(), key=lambda line: (round(line[0].y0), line[0].x0))
    lines = [" ".join(w.text for w in sorted(line, key=lambda w: w.x0)) for line in ordered]
    return " ".join(lines[-_LEAD_LINES:])
