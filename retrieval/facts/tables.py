"""Tables in a loaded document's sections. Every loader writes a table as Markdown rows (CSV,
HTML, DOCX, XLSX and Markdown itself), so one reader serves them all; a PDF's tables, which its
text layer only lays out, come from the loader's `meta["tables"]`
(`retrieval.loading.pdf_tables`). Each table keeps what stands around it (the headings, the text
just before it, the document's title and page), which says what its values are and for which
year."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from retrieval.loading.document import LoadedDocument

_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_LEAD_LINES = 3  # lines of text before a table read as its caption


@dataclass(frozen=True)
class Table:
    """One table: its header and rows (cells as written), and what says what it holds."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    headings: tuple[str, ...]  # the section's heading path (a CSV's caption row is one)
    lead: str  # the text just before the table in its section
    title: str  # the document's
    page: int | None
    first_row: int  # the table's row number of ``rows[0]`` (1 = the first under the header)


def document_tables(doc: LoadedDocument) -> Iterator[Table]:
    """Every table of ``doc``, in order. A table cut into several sections (a long CSV) comes
    as several tables with the same header, each numbering its rows on from the last."""
    numbered: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
    for section in doc.sections:
        lines = section.text.split("\n")
        index = 0
        lead: list[str] = []
        while index < len(lines):
            line = lines[index].strip()
            if (
                _is_row(line)
                and index + 1 < len(lines)
                and _SEPARATOR.match(lines[index + 1].strip())
            ):
                header = split_row(line)
                end = index + 2
                rows = []
                while end < len(lines) and _is_row(lines[end].strip()):
                    rows.append(_padded(split_row(lines[end].strip()), len(header)))
                    end += 1
                key = (section.heading_path, header)
                first = numbered.get(key, 0) + 1
                numbered[key] = first - 1 + len(rows)
                yield Table(
                    header,
                    tuple(rows),
                    section.heading_path,
                    " ".join(lead[-_LEAD_LINES:]),
                    doc.title,
                    section.page,
                    first,
                )
                lead = []
                index = end
                continue
            if line:
                lead.append(line)
            index += 1
    yield from _pdf_tables(doc)


def _pdf_tables(doc: LoadedDocument) -> Iterator[Table]:
    for table in doc.meta.get("tables") or ():
        header = tuple(str(cell) for cell in table["header"])
        rows = tuple(_padded(tuple(str(c) for c in row), len(header)) for row in table["rows"])
        yield Table(header, rows, (), str(table.get("lead", "")), doc.title, table.get("page"), 1)


def split_row(line: str) -> tuple[str, ...]:
    """The cells of one Markdown row; an escaped bar ``\\|`` stays inside its cell."""
    body = line.strip()
    body = body.removeprefix("|")
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells = re.split(r"(?<!\\)\|", body)
    return tuple(cell.strip().replace("\\|", "|") for cell in cells)


def _is_row(line: str) -> bool:
    return line.startswith("|") and line.count("|") >= 2


def _padded(row: tuple[str, ...], width: int) -> tuple[str, ...]:
    return row[:width] if len(row) >= width else row + ("",) * (width - len(row))
