"""FAQ workbooks (.xlsx), for the admissions offices that keep their FAQ in Excel: one sheet,
the first row names the columns (the CSV's, bot.knowledge.faq_files), then one entry per row.
A cell keeps its line breaks, so a multi-line answer is one cell as staff typed it.

Reading takes the first visible sheet, skips blank rows and reads a cell as Excel shows it
(retrieval.loading.xlsx's ``cell_text``: an id typed as 101 is "101", not "101.0"). Writing
stores every value as text: openpyxl would store a text starting with "=" as a formula, which
reads back empty.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence

from openpyxl import Workbook, load_workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from bot.core.errors import FaqFileError
from retrieval.loading.xlsx import BROKEN_WORKBOOK, cell_text

# A workbook is a zip: a small upload may unpack to gigabytes. An FAQ of thousands of entries
# unpacks to a few megabytes; past this it is no FAQ, and it is refused before it is unpacked.
MAX_UNPACKED_BYTES = 50 * 1024 * 1024
MAX_ROWS = 50_000
EXCEL_CELL_CHARS = 32_767  # Excel's own limit: it cuts a longer text when it opens the file
WIDTHS = {"id": 16, "question": 50, "answer": 80, "variants": 40}
WRAPPED = frozenset({"question", "answer", "variants"})


def workbook_rows(raw: bytes, label: str) -> list[dict[str, str]]:
    """Each entry of the first visible sheet: its cells under the header row's names (lower
    case; a column without a name is left out). FaqFileError if ``raw`` is no readable
    workbook or its header names no question and answer."""
    _check_unpacked_size(raw, label)
    try:
        book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except BROKEN_WORKBOOK as exc:
        raise _unreadable(label, exc) from exc
    try:
        title, grid = _first_sheet(book, label)
    except BROKEN_WORKBOOK as exc:  # read-only: a sheet's XML is parsed as its rows are read
        raise _unreadable(label, exc) from exc
    finally:
        book.close()
    if not grid:
        raise FaqFileError(f"{label}: sheet {title!r} is empty")
    header = [name.strip().lower() for name in grid[0]]
    if not {"question", "answer"} <= set(header):
        found = ", ".join(name for name in header if name) or "nothing"
        raise FaqFileError(
            f"{label}: the first row of sheet {title!r} should name the columns "
            f"(question, answer, …); it holds {found}"
        )
    return [
        {name: value for name, value in zip(header, row, strict=False) if name} for row in grid[1:]
    ]


def _first_sheet(book: Workbook, label: str) -> tuple[str, list[list[str]]]:
    sheet = next((s for s in book.worksheets if s.sheet_state == "visible"), None)
    if sheet is None:
        raise FaqFileError(f"{label}: the workbook has no visible sheet")
    grid = []
    for number, values in enumerate(sheet.iter_rows(values_only=True), start=1):
        if number > MAX_ROWS:
            raise FaqFileError(f"{label}: more than {MAX_ROWS:,} rows; split the FAQ")
        cells = [cell_text(v) for v in values]
        if any(c.strip() for c in cells):
            grid.append(cells)
    return sheet.title, grid


def _check_unpacked_size(raw: bytes, label: str) -> None:
    # zipfile never unpacks a member past the size its directory declares, so the sum bounds it.
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except BROKEN_WORKBOOK as exc:
        raise _unreadable(label, exc) from exc
    if unpacked > MAX_UNPACKED_BYTES:
        raise FaqFileError(
            f"{label}: the workbook unpacks to {unpacked // 1024 // 1024} MB, more than an FAQ "
            f"holds (at most {MAX_UNPACKED_BYTES // 1024 // 1024} MB)"
        )


def _unreadable(label: str, exc: BaseException) -> FaqFileError:
    return FaqFileError(f"{label} is not a readable Excel workbook (.xlsx): {exc}")


def workbook_bytes(rows: Sequence[Mapping[str, str | None]], columns: Sequence[str]) -> bytes:
    """``rows`` as an .xlsx file: a header row of ``columns``, then a row each, all as text."""
    book = Workbook()
    sheet = book.active
    if sheet is None:  # a new Workbook always has one sheet; the stubs allow none
        sheet = book.create_sheet()
    sheet.title = "FAQ"
    sheet.append(list(columns))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for r, row in enumerate(rows, start=2):
        for c, name in enumerate(columns, start=1):
            value = row.get(name)
            if value:
                cell = sheet.cell(row=r, column=c, value=_cell_value(value, name, row))
                cell.data_type = "s"  # "=…" would otherwise be stored as a formula
    for c, name in enumerate(columns, start=1):
        letter = get_column_letter(c)
        sheet.column_dimensions[letter].width = WIDTHS.get(name, 14)
        if name in WRAPPED:
            for (cell,) in sheet.iter_rows(min_row=2, min_col=c, max_col=c):
                cell.alignment = Alignment(wrap_text=True, vertical="top")
    sheet.freeze_panes = "A2"  # the header stays in sight while staff scroll
    sheet.auto_filter.ref = sheet.dimensions
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _cell_value(value: str, column: str, row: Mapping[str, str | None]) -> str:
    # A workbook cannot hold control characters (a PDF's form feed in a drafted answer):
    # openpyxl refuses the whole file for one, so they are dropped.
    text = ILLEGAL_CHARACTERS_RE.sub("", value)
    if len(text) > EXCEL_CELL_CHARS:
        raise FaqFileError(
            f"entry {row.get('id')}: its {column} has {len(text):,} characters, more than an "
            f"Excel cell holds ({EXCEL_CELL_CHARS:,}); export it as JSONL or CSV"
        )
    return text
