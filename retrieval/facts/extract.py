"""Facts and catalogue items from one document's tables.

A table is a facts table when one column names majors or programmes (its header says so: "Ngành",
"Tên ngành", "Chương trình", or it holds a major's code). Every other column is read for what its
values are:

- the attribute (cut-off score, quota, fee) from its header, else from the table's headings, the
  text before it or the document's title, else from its sibling columns when they all hold one
  (a column "Điểm ĐGNL" beside "Điểm chuẩn" holds cut-offs too);
- the admission method from its header ("THPT", "Điểm ĐGNL", "Học bạ"), else the headings';
- the year from its header ("Năm 2024"), else the nearest of the headings (a CSV's caption row),
  the text before the table, the title; two years at one level and none nearer is no year.

A value is kept only when all of that is read and the cell is a clean number (or says the major
is not admitted that way, "—"); a score above the scale the document states for its method
("thang 30", "thang 1.200") or an amount with no unit is left out and listed for staff
(``Extraction.rejected``). Nothing is guessed: a column whose year or attribute is unclear is
listed, not filled in.

This module walks the tables and their rows; what the text around a table says (context), its
value columns and their cells (columns, cells), a row's major and programme (names) and the
document's sentences on scales and publication dates (sentences) are read in modules of their
own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from retrieval.facts.cells import CODE
from retrieval.facts.columns import ValueColumn, column_of, one_each, value_columns, value_fact
from retrieval.facts.context import TableContext
from retrieval.facts.model import (
    CAMPUS,
    COMBINATION,
    COMBINATIONS,
    MAJOR,
    METHOD,
    PROGRAMME,
    CatalogueItem,
    Extraction,
    Fact,
    Place,
    Rejected,
)
from retrieval.facts.names import major_and_programme, row_programme
from retrieval.facts.sentences import method_scales, publications
from retrieval.facts.tables import Table, document_tables
from retrieval.guard.checks import NearMissGuard
from retrieval.loading.document import LoadedDocument
from retrieval.text.folding import fold
from retrieval.text.pack import load_pack

# Stored with a document's facts: a document read by another version is read again at the next
# ingest even when its text has not changed.
EXTRACTOR_VERSION = 7
_WORDS = load_pack().facts
_COMBO = re.compile(r"\b[A-DHKMNRSTVX]\d\d\b")


def extract_facts(doc: LoadedDocument, guard: NearMissGuard) -> Extraction:
    """The facts, the cells left out and the catalogue items of ``doc``'s tables."""
    out = Extraction()
    scales = method_scales(doc, guard)
    for table in document_tables(doc):
        _read_table(table, doc, guard, scales, out)
    out.items = _catalogue(out.facts, out.items)
    out.publications = publications(doc)
    return out


def _read_table(
    table: Table,
    doc: LoadedDocument,
    guard: NearMissGuard,
    scales: dict[str | None, float],
    out: Extraction,
) -> None:
    headers = [fold(h) for h in table.header]
    name_col = column_of(headers, _WORDS.name_columns)
    code_col = column_of(headers, _WORDS.code_columns)
    if name_col is None and code_col is None:
        return
    combo_col = column_of(headers, _WORDS.combination_columns)
    majors_col = _majorscolumn_of(table, headers, name_col, guard)
    context = TableContext(table, guard)
    taken = {name_col, code_col, combo_col, majors_col}
    columns, alike = one_each(value_columns(table, headers, taken, context, guard), table.header)
    for index in alike:
        place = _place(table, doc, None, table.header[index])
        out.rejected.append(
            Rejected(table.header[index], "cột trùng phương thức với cột khác", place)
        )
    # Rows that name no major and share a code: their values cannot be told apart.
    unnamed = Counter(
        row[code_col].strip()
        for row in table.rows
        if code_col is not None and not (row[name_col].strip() if name_col is not None else "")
    )
    for offset, row in enumerate(table.rows):
        number = table.first_row + offset
        code_cell = row[code_col].strip() if code_col is not None else ""
        if unnamed[code_cell] > 1 and not (row[name_col].strip() if name_col is not None else ""):
            place = _place(table, doc, number, table.header[code_col or 0])
            out.rejected.append(
                Rejected(code_cell, "hàng không tên, trùng mã với hàng khác", place)
            )
            continue
        for major, code, programme, alias in _subjects(
            row, name_col, code_col, majors_col, context, guard
        ):
            name_header = table.header[name_col if name_col is not None else 0]
            _read_row(row, number, name_header, major, code, programme, alias, table, doc,
                      columns, combo_col, context, scales, out)  # fmt: skip


def _subjects(
    row: tuple[str, ...],
    name_col: int | None,
    code_col: int | None,
    majors_col: int | None,
    context: TableContext,
    guard: NearMissGuard,
) -> list[tuple[str, str | None, str | None, str | None]]:
    """Whom a row is about: (major, code, programme, alias) for its one major, or for each major
    its "Ngành áp dụng" cell lists ("KHMT, KTPM, CNTT" under "Chất lượng cao"); none for a
    total, a note or a row naming several majors in one name."""
    name_cell = row[name_col] if name_col is not None else ""
    if majors_col is not None:
        named = guard.facets(row[majors_col]).get("major", frozenset())
        programme = row_programme(name_cell, guard)
        return [(m, None, programme, None) for m in sorted(named)]
    code = row[code_col].strip() if code_col is not None else None
    code = code if code and CODE.match(code) else None
    if code is None and (
        code_col is not None or len(guard.facets(name_cell).get("major", ())) != 1
    ):
        return []
    if not name_cell and code is not None:
        # A row that gives only the code: the major the vocabulary knows by it, else the code.
        known = guard.facets(code).get("major", frozenset())
        name_cell = next(iter(known)) if len(known) == 1 else code
    major, programme, alias = major_and_programme(name_cell or code or "", code, context, guard)
    return [(major, code, programme, alias)] if major else []


def _majorscolumn_of(
    table: Table, headers: list[str], name_col: int | None, guard: NearMissGuard
) -> int | None:
    """A column beside the name column listing the majors a row applies to ("Ngành áp dụng":
    "KHMT, KTPM, HTTT"), when most of its cells name two or more majors."""
    for index, header in enumerate(headers):
        if index == name_col or not header.startswith("nganh"):
            continue
        cells = [row[index] for row in table.rows if row[index].strip()]
        lists = [c for c in cells if len(guard.facets(c).get("major", ())) >= 2]
        if cells and len(lists) * 2 >= len(cells):
            return index
    return None


def _read_row(
    row: tuple[str, ...],
    number: int,
    name_header: str,
    major: str,
    code: str | None,
    programme: str | None,
    alias: str | None,
    table: Table,
    doc: LoadedDocument,
    columns: list[ValueColumn],
    combo_col: int | None,
    context: TableContext,
    scales: dict[str | None, float],
    out: Extraction,
) -> None:
    """One row's catalogue item and facts, for one of the majors it is about."""
    out.items.append(
        CatalogueItem(
            MAJOR,
            major,
            code,
            (alias,) if alias else (),
            _place(table, doc, number, name_header),
        )
    )
    if combo_col is not None and row[combo_col].strip():
        cell = row[combo_col].strip()
        combos = tuple(dict.fromkeys(c.upper() for c in _COMBO.findall(cell.upper())))
        place = _place(table, doc, number, table.header[combo_col])
        year = context.year(None)
        if not combos or year is None:
            reason = "không đọc được tổ hợp" if not combos else "không rõ năm"
            out.rejected.append(Rejected(cell, reason, place))
        else:
            out.facts.append(
                Fact(
                    COMBINATIONS,
                    major,
                    code,
                    programme,
                    None,
                    year,
                    cell,
                    combinations=combos,
                    place=place,
                )
            )
    for column in columns:
        cell = row[column.index].strip()
        place = _place(table, doc, number, table.header[column.index])
        fact = value_fact(column, cell, major, code, programme, scales, place)
        if isinstance(fact, Rejected):
            out.rejected.append(fact)
        elif fact is not None:
            out.facts.append(fact)


def _place(table: Table, doc: LoadedDocument, row: int | None, column: str) -> Place:
    return Place(doc.source, doc.title, doc.url, table.page, table.headings, row, column)


def _catalogue(facts: Iterable[Fact], majors: Iterable[CatalogueItem]) -> list[CatalogueItem]:
    """One item per major (its code and the place first seen), programme, method and
    combination the facts name."""
    items: dict[tuple[str, str], CatalogueItem] = {}
    for item in majors:
        key = (MAJOR, fold(item.name))
        before = items.get(key)
        if before is None:
            items[key] = item
        else:
            items[key] = CatalogueItem(
                MAJOR,
                before.name,
                before.code or item.code,
                tuple(dict.fromkeys((*before.aliases, *item.aliases))),
                before.place,
            )
    for fact in facts:
        if fact.programme:
            items.setdefault(
                (PROGRAMME, fold(fact.programme)),
                CatalogueItem(PROGRAMME, fact.programme, place=fact.place),
            )
        if fact.method:
            items.setdefault(
                (METHOD, fold(fact.method)), CatalogueItem(METHOD, fact.method, place=fact.place)
            )
        for combo in fact.combinations:
            items.setdefault(
                (COMBINATION, combo.lower()), CatalogueItem(COMBINATION, combo, place=fact.place)
            )
        if fact.campus:
            items.setdefault(
                (CAMPUS, fold(fact.campus)), CatalogueItem(CAMPUS, fact.campus, place=fact.place)
            )
    return list(items.values())
