"""Spreadsheets (.xlsx): each sheet's tables as CSV files' are (retrieval.loading.csv), under
the sheet's name. Values are read as Excel shows them: a formula's last computed value, a
whole number without ".0", a date as day/month/year; hidden sheets are skipped."""

from __future__ import annotations

import io
import zipfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException

from bot.core.errors import IngestError
from retrieval.loading.csv import table_sections
from retrieval.loading.document import ParsedDocument, prettify_stem

MAX_CELLS = 200_000  # a sheet larger than this is cut there: a data dump, not a table to quote


def read_xlsx(path: Path, raw: bytes) -> ParsedDocument:
    try:
        book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise IngestError(f"{path.name}: not a readable .xlsx file ({exc})") from exc
    sections = []
    try:
        for sheet in book.worksheets:
            if sheet.sheet_state != "visible":
                continue
            rows: list[list[str]] = []
            cells = 0
            for values in sheet.iter_rows(values_only=True):
                rows.append([_text(v) for v in values])
                cells += len(values)
                if cells > MAX_CELLS:
                    break
            named = sheet.title if len(book.worksheets) > 1 else ""
            sections += table_sections(rows, named)
    finally:
        book.close()
    return ParsedDocument(
        title=prettify_stem(path.stem),
        sections=sections,
        meta={"format": "xlsx", "sheets": len(book.worksheets)},
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "x" if value else ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime | date):
        return value.strftime("%d/%m/%Y")
    return " ".join(str(value).split())
