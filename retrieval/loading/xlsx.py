"""Spreadsheets (.xlsx): each sheet's tables as CSV files' are (retrieval.loading.csv), under
the sheet's name. Values are read as Excel shows them: a formula's last computed value, a
whole number without ".0", a date as day/month/year; hidden sheets are skipped.

``BROKEN_WORKBOOK`` and ``cell_text`` serve the FAQ's workbooks too (bot.knowledge.faq_workbook)."""

from __future__ import annotations

import io
import zipfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

from openpyxl import Workbook, load_workbook
from openpyxl.utils.exceptions import InvalidFileException

from bot.core.errors import IngestError
from retrieval.loading.csv import table_sections
from retrieval.loading.document import ParsedDocument, prettify_stem

MAX_CELLS = 200_000  # a sheet larger than this is cut there: a data dump, not a table to quote

# What openpyxl raises for a file that is no workbook or a damaged one: no zip (BadZipFile), a
# missing part (KeyError), malformed XML (ElementTree's ParseError is a SyntaxError), a value
# of the wrong kind. In read-only mode a sheet's XML is parsed while its rows are read, so these
# come from the reading as well as from load_workbook.
BROKEN_WORKBOOK = (
    InvalidFileException,
    zipfile.BadZipFile,
    KeyError,
    ValueError,
    TypeError,
    SyntaxError,
    OSError,
)


def read_xlsx(path: Path, raw: bytes) -> ParsedDocument:
    try:
        book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except BROKEN_WORKBOOK as exc:
        raise IngestError(f"{path.name}: not a readable .xlsx file ({exc})") from exc
    try:
        grids = _grids(book)
    except BROKEN_WORKBOOK as exc:
        raise IngestError(f"{path.name}: not a readable .xlsx file ({exc})") from exc
    finally:
        book.close()
    named = len(book.worksheets) > 1
    return ParsedDocument(
        title=prettify_stem(path.stem),
        sections=[s for title, rows in grids for s in table_sections(rows, title if named else "")],
        meta={"format": "xlsx", "sheets": len(book.worksheets)},
    )


def _grids(book: Workbook) -> list[tuple[str, list[list[str]]]]:
    """Each visible sheet's title and cells."""
    grids = []
    for sheet in book.worksheets:
        if sheet.sheet_state != "visible":
            continue
        rows: list[list[str]] = []
        cells = 0
        for values in sheet.iter_rows(values_only=True):
            rows.append([" ".join(cell_text(v).split()) for v in values])
            cells += len(values)
            if cells > MAX_CELLS:
                break
        grids.append((sheet.title, rows))
    return grids


def cell_text(value: Any) -> str:
    """A cell's value as Excel shows it, line breaks kept: a whole number without ".0", a date
    as day/month/year, a ticked box as "x"."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "x" if value else ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime | date):
        return value.strftime("%d/%m/%Y")
    return str(value)
