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
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from retrieval.facts.model import (
    CAMPUS,
    COMBINATION,
    COMBINATIONS,
    CUTOFF,
    MAJOR,
    METHOD,
    PROGRAMME,
    CatalogueItem,
    Extraction,
    Fact,
    Place,
    Rejected,
)
from retrieval.facts.tables import Table, document_tables, split_row
from retrieval.guard.checks import NearMissGuard
from retrieval.loading.document import LoadedDocument
from retrieval.text.folding import fold
from retrieval.text.pack import load_pack

# Stored with a document's facts: a document read by another version is read again at the next
# ingest even when its text has not changed.
EXTRACTOR_VERSION = 7
_WORDS = load_pack().facts
_KIND_OF = dict(_WORDS.attributes)  # folded attribute -> score | count | amount
_NOT_OFFERED = frozenset(fold(c) for c in _WORDS.not_offered) | frozenset(_WORDS.not_offered)
_NUMBER = re.compile(r"^\d{1,3}(?:[.,]\d{3})+$|^\d+(?:[.,]\d+)?$")
_THOUSANDS = re.compile(r"^\d{1,3}(?:\.\d{3})+$")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_CUTOFF_WORDS = re.compile(r"\b(?:diem chuan|diem trung tuyen)\b")
_PUBLISHED = re.compile(r"\b(?:cong bo|thong bao)\b")
_CODE = re.compile(r"^\d{5}[0-9A-Za-z]{1,3}(?:[_-][0-9A-Za-z]+)*$")
_COMBO = re.compile(r"\b[A-DHKMNRSTVX]\d\d\b")
# "thang 30", "thang điểm 30", "thang 1.200": the scale a method's scores are given on.
_SCALE = re.compile(r"\bthang(?: diem)? (\d{1,3}(?:[.,]\d{3})?|\d+)\b")
_SKIPPED_IN_INITIALS = frozenset({"va", "and", "of"})
_QUALIFIED = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<qualifier>[^()]+)\)?\s*$")
# Words that only say "a programme" before its name ("CT tiên tiến", "hệ chất lượng cao").
_PROGRAMME_WORDS = re.compile(r"^(?:chuong trinh|ct|he|huong|dinh huong) ")
_DASHED = re.compile(r"^(?P<name>.+?)\s+[–—-]\s+(?P<qualifier>.+)$")
# A currency as written in a header or a cell ("triệu đồng", "đồng", "VNĐ", "USD").
_CAMPUS_WORDS = re.compile(r"\b(?:co so|campus|phan hieu)\b")
_CURRENCY = re.compile(r"(?:triệu |nghìn |ngàn )?(?:đồng|vnđ|vnd|usd|aud)|triệu", re.I)


def extract_facts(doc: LoadedDocument, guard: NearMissGuard) -> Extraction:
    """The facts, the cells left out and the catalogue items of ``doc``'s tables."""
    out = Extraction()
    scales = _scales(doc, guard)
    for table in document_tables(doc):
        _read_table(table, doc, guard, scales, out)
    out.items = _catalogue(out.facts, out.items)
    out.publications = _publications(doc)
    return out


def _publications(doc: LoadedDocument) -> dict[int, str]:
    """The document's sentences saying when a year's cut-offs are published."""
    found: dict[int, str] = {}
    for section in doc.sections:
        for piece in re.split(r"(?<=[.!?])\s+|\n", section.text):
            # a schedule's row reads "what: when"
            sentence = (
                ": ".join(c for c in split_row(piece) if c) if piece.startswith("|") else piece
            )
            folded = fold(sentence)
            if _CUTOFF_WORDS.search(folded) and _PUBLISHED.search(folded):
                for year in sorted({int(y) for y in _YEAR.findall(sentence)}, reverse=True):
                    found.setdefault(year, " ".join(sentence.split()).strip("*_ "))
                    break
    return found


def _read_table(
    table: Table,
    doc: LoadedDocument,
    guard: NearMissGuard,
    scales: dict[str | None, float],
    out: Extraction,
) -> None:
    headers = [fold(h) for h in table.header]
    name_col = _column(headers, _WORDS.name_columns)
    code_col = _column(headers, _WORDS.code_columns)
    if name_col is None and code_col is None:
        return
    combo_col = _column(headers, _WORDS.combination_columns)
    majors_col = _majors_column(table, headers, name_col, guard)
    context = _Context(table, guard)
    taken = {name_col, code_col, combo_col, majors_col}
    columns, alike = _one_each(_value_columns(table, headers, taken, context, guard), table.header)
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
    context: _Context,
    guard: NearMissGuard,
) -> list[tuple[str, str | None, str | None, str | None]]:
    """Whom a row is about: (major, code, programme, alias) for its one major, or for each major
    its "Ngành áp dụng" cell lists ("KHMT, KTPM, CNTT" under "Chất lượng cao"); none for a
    total, a note or a row naming several majors in one name."""
    name_cell = row[name_col] if name_col is not None else ""
    if majors_col is not None:
        named = guard.facets(row[majors_col]).get("major", frozenset())
        programme = _row_programme(name_cell, guard)
        return [(m, None, programme, None) for m in sorted(named)]
    code = row[code_col].strip() if code_col is not None else None
    code = code if code and _CODE.match(code) else None
    if code is None and (
        code_col is not None or len(guard.facets(name_cell).get("major", ())) != 1
    ):
        return []
    if not name_cell and code is not None:
        # A row that gives only the code: the major the vocabulary knows by it, else the code.
        known = guard.facets(code).get("major", frozenset())
        name_cell = next(iter(known)) if len(known) == 1 else code
    major, programme, alias = _major_and_programme(name_cell or code or "", code, context, guard)
    return [(major, code, programme, alias)] if major else []


def _majors_column(
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


def _row_programme(cell: str, guard: NearMissGuard) -> str | None:
    """The programme a row's name cell names: "Chuẩn – nhóm 1" is the standard one (None),
    "Chất lượng cao" the high-quality one, anything else as written."""
    head = re.split(r"\s+[–—-]\s+|\s*\(", cell.strip())[0]
    if fold(head) in _WORDS.standard_programme:
        return None
    return _programme(head, guard) or (_tidy(head) if head else None)


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
    columns: list[_Column],
    combo_col: int | None,
    context: _Context,
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
        fact = _value_fact(column, cell, major, code, programme, scales, place)
        if isinstance(fact, Rejected):
            out.rejected.append(fact)
        elif fact is not None:
            out.facts.append(fact)


class _Context:
    """What the text around a table says: its headings (nearest last), the text before it and
    the document's title, each read by the guard."""

    def __init__(self, table: Table, guard: NearMissGuard) -> None:
        # Nearest first: the last heading, ..., the first, the text before, the title.
        self.levels = [
            guard.facets(text)
            for text in (*reversed(table.headings), table.lead, table.title)
            if text
        ]
        self.texts = [fold(t) for t in (*table.headings, table.lead, table.title) if t]
        # ``levels``' texts, folded, None for the title's
        near = [*reversed(table.headings), table.lead]
        self.near = [fold(t) for t in near if t] + ([None] if table.title else [])

    def first(self, category: str) -> frozenset[str] | None:
        for facets in self.levels:
            if category in facets:
                return facets[category]
        return None

    def year(self, named: frozenset[str] | None) -> int | None:
        """The one year named (a school year "2026–2027" is 2026), else None."""
        years = sorted(int(y) for y in named or self.first("year") or ())
        if len(years) == 2 and years[1] - years[0] == 1:
            return years[0]
        return years[0] if len(years) == 1 else None

    def campus(self) -> str | None:
        """The one campus the nearest heading or the text just before the table names as a
        campus ("1. CƠ SỞ ĐÀO TẠO PHÍA BẮC", "Cơ sở TP. HCM"), never the title's (a school's
        name may hold a city): the table's values are that campus's."""
        for facets, text in zip(self.levels, self.near, strict=False):
            if text is None:
                break
            named = facets.get("campus", frozenset())
            if len(named) == 1 and _CAMPUS_WORDS.search(text):
                return next(iter(named))
            if named:
                return None
        return None

    def standard(self) -> bool:
        return any(
            re.search(rf"\b{re.escape(w)}\b", t)
            for t in self.texts
            for w in _WORDS.standard_programme
        )


@dataclass(frozen=True)
class _Column:
    """A value column of a table, as read: what its values are, for which method and year,
    and the currency its header names."""

    index: int
    attribute: str | None
    method: str | None
    year: int | None
    unit: str | None
    campus: str | None = None  # the one campus its header names ("Chỉ tiêu Hà Nội")


def _value_columns(
    table: Table,
    headers: list[str],
    taken: set[int | None],
    context: _Context,
    guard: NearMissGuard,
) -> list[_Column]:
    read: list[tuple[int, str | None, str | None, frozenset[str] | None, str | None]] = []
    campuses: dict[int, str | None] = {}
    table_campus = context.campus()
    for index, header in enumerate(table.header):
        if index in taken or not headers[index] or headers[index] in {"stt", "tt", "#", "so tt"}:
            continue
        facets = guard.facets(header)
        attribute = _attribute(facets.get("attribute"))
        method = _method(facets.get("method"), headers[index])
        currency = _CURRENCY.search(header)
        named_campus = facets.get("campus", frozenset())
        campuses[index] = next(iter(named_campus)) if len(named_campus) == 1 else table_campus
        read.append(
            (
                index,
                attribute,
                method,
                facets.get("year"),
                currency.group(0).lower() if currency else None,
            )
        )
    named = {a for _, a, _, _, _ in read if a is not None}
    table_attribute = _attribute(context.first("attribute"))
    table_method = _method(context.first("method"), " ".join(context.texts))
    columns = []
    for index, attribute, method, years, unit in read:
        if attribute is None:
            # A column naming only a method or a year holds what the table is about, or what
            # its sibling columns all hold.
            if method is None and years is None:
                attribute = None
            elif table_attribute is not None:
                attribute = table_attribute
            elif len(named) == 1:
                attribute = next(iter(named))
        if attribute is None:
            continue
        columns.append(
            _Column(
                index, attribute, method or table_method, context.year(years), unit, campuses[index]
            )
        )
    return columns


def _one_each(columns: list[_Column], header: tuple[str, ...]) -> tuple[list[_Column], list[int]]:
    """The columns that alone hold their attribute for their method, year and campus (and, for
    an amount, what it is per), and the others: "SAT" and "ACT" both read as an international
    certificate cannot be told apart by a question, so neither is used; nor are two campus
    columns whose campus the vocabulary does not know ("BVH", "BVS")."""

    def key(c: _Column) -> tuple[str | None, str | None, int | None, str | None, str | None]:
        return c.attribute, c.method, c.year, _period(header[c.index]), c.campus

    counts = Counter(key(c) for c in columns)
    kept = [c for c in columns if counts[key(c)] == 1]
    return kept, [c.index for c in columns if counts[key(c)] > 1]


def _column(headers: list[str], names: tuple[str, ...]) -> int | None:
    """The first column whose folded header is one of ``names`` or starts with one of them."""
    for index, header in enumerate(headers):
        if any(header == n or header.startswith(n + " ") for n in names):
            return index
    return None


def _attribute(values: frozenset[str] | None) -> str | None:
    found = [v for v in values or () if fold(v) in _KIND_OF]
    return found[0] if len(found) == 1 else None


def _method(values: frozenset[str] | None, folded_text: str) -> str | None:
    found = set(values or ())
    for word, method in _WORDS.column_methods.items():
        if re.search(rf"\b{re.escape(word)}\b", folded_text):
            found.add(method)
    return next(iter(found)) if len(found) == 1 else None


def _value_fact(
    column: _Column,
    cell: str,
    major: str,
    code: str | None,
    programme: str | None,
    scales: dict[str | None, float],
    place: Place,
) -> Fact | Rejected | None:
    attribute = column.attribute
    assert attribute is not None  # _value_columns keeps only read columns
    if column.year is None:
        return Rejected(cell, "không rõ năm", place) if cell else None
    if not cell:
        return None
    base = Fact(
        attribute,
        major,
        code,
        programme,
        column.method,
        column.year,
        cell,
        place=place,
        campus=column.campus,
    )
    if cell in _NOT_OFFERED or fold(cell) in _NOT_OFFERED:
        return replace(base, offered=False)
    kind = _KIND_OF[fold(attribute)]
    value = read_number(cell, kind)
    if value is None:
        return Rejected(cell, "không phải một số", place)
    if kind == "score":
        scale = scales.get(column.method) or (scales.get(None) if column.method is None else None)
        if scale is not None and value > scale:
            return Rejected(cell, f"lớn hơn thang điểm {scale:g}", place)
        return replace(base, value=value, scale=scale)
    if kind == "amount":
        # The currency from the header or the cell; what it is per from the header ("Học
        # phí/năm"): "đồng/năm". An amount without a currency is not read.
        in_cell = _CURRENCY.search(cell)
        currency = column.unit or (in_cell.group(0).lower() if in_cell else None)
        if currency is None:
            return Rejected(cell, "không rõ đơn vị", place)
        if currency == "triệu" or (column.unit or "").startswith("triệu"):
            value = value * 1_000_000 if value < 100_000 else value
        per = _period(place.column)
        return replace(base, value=value, unit=f"{currency}/{per}" if per else currency)
    return replace(base, value=value)


def _period(header: str) -> str | None:
    """What an amount's column is per ("Học phí/năm": năm), from the language pack."""
    folded = fold(header)
    for word, per in _WORDS.periods.items():
        if re.search(rf"(?:/\s*|\bmoi |\bper |\bmot ){re.escape(word)}\b", folded):
            return per
    return None


def is_code(text: str) -> bool:
    """Whether ``text`` is a major's code ("7480101", "7480201_CLC"), not a name."""
    return bool(_CODE.match(text.strip()))


def value_kind(attribute: str) -> str:
    """What an attribute's values are: a score, a count or an amount."""
    return _KIND_OF.get(fold(attribute), "score")


def read_number(text: str, kind: str = "score") -> float | None:
    """A cell's number as written in Vietnamese or English: "26,85", "27.5", "1.200", "935".

    A dot before exactly three digits groups thousands ("1.200"), except in a score of two
    whole digits: "27.125" is 27.125 (no thousands scale has a score from 10.000 to 99.999).
    """
    cell = text.strip().split()[0] if text.strip() else ""
    if not _NUMBER.match(cell):
        return None
    whole = cell.split(".")[0]
    if _THOUSANDS.match(cell) and not (
        kind == "score" and cell.count(".") == 1 and len(whole) == 2
    ):
        return float(cell.replace(".", ""))
    if re.match(r"^\d{1,3}(?:,\d{3}){2,}$", cell):  # 15,000,000
        return float(cell.replace(",", ""))
    return float(cell.replace(",", "."))


def _scales(doc: LoadedDocument, guard: NearMissGuard) -> dict[str | None, float]:
    """The scale each method's scores are given on, where the document says so in one sentence
    or line ("ĐGNL: … thang 1.200"); ``None`` for a scale said with no method."""
    scales: dict[str | None, float] = {}
    for section in doc.sections:
        for line in re.split(r"(?<=[.;])\s+|\n", section.text):
            folded = fold(line)
            match = _SCALE.search(folded)
            if match is None:
                continue
            scale = read_number(match.group(1), "count")
            if scale is None:
                continue
            method = _method(guard.facets(line).get("method"), folded)
            scales.setdefault(method, scale)
    return scales


def _major_and_programme(
    name: str, code: str | None, context: _Context, guard: NearMissGuard
) -> tuple[str, str | None, str | None]:
    """A row's major and programme: "Khoa học Máy tính – chất lượng cao" is the major Khoa học
    Máy tính in the high-quality programme, "Hệ thống thông tin (CT tiên tiến)" the advanced
    one; a programme the row does not name is the table's (its headings), else the standard one
    (None). A dash splits the name only before a programme's name ("Tài chính - Ngân hàng" is
    one major). A bracket holding the name's initials ("Khoa học Máy tính (KHMT)") is an alias,
    the third thing returned."""
    name = " ".join(name.replace("**", "").split())
    programme: str | None = None
    alias: str | None = None
    qualified = _QUALIFIED.match(name)
    if qualified:
        name, qualifier = qualified["name"].strip(), qualified["qualifier"].strip()
        if fold(qualifier).replace(" ", "") == initials(name):
            alias = qualifier
        else:
            programme = _programme(qualifier, guard) or _tidy(qualifier)
    else:
        dashed = _DASHED.match(name)
        if dashed:
            found = _programme(dashed["qualifier"], guard)
            if found is not None:
                name, programme = dashed["name"].strip(), found
    if programme is None and code:
        programme = _programme(code, guard)
    if programme is None and not context.standard():
        table_programmes = context.first("programme")
        if table_programmes and len(table_programmes) == 1:
            programme = next(iter(table_programmes))
    if programme is not None and fold(programme) in _WORDS.standard_programme:
        programme = None
    return name, programme, alias


def initials(name: str) -> str:
    """ "khmt" for "Khoa học Máy tính", "mmttt" for "Mạng máy tính và truyền thông" ("và",
    "and", "of" skipped); "" for a one-word name."""
    words = [w for w in fold(name).split() if w not in _SKIPPED_IN_INITIALS]
    return "".join(w[0] for w in words if w[0].isalpha()) if len(words) >= 2 else ""


def _programme(text: str, guard: NearMissGuard) -> str | None:
    """The programme ``text`` names, as the guard calls it, when it names no more than that
    ("CT tiên tiến", "CLC"); "Chất lượng cao định hướng Nhật Bản" is a programme of its own."""
    folded = fold(text)
    if folded in _WORDS.standard_programme:
        return folded
    found = guard.facets(text).get("programme")
    if not found or len(found) != 1:
        return None
    programme = next(iter(found))
    words = _PROGRAMME_WORDS.sub("", folded).split()
    return programme if len(words) <= len(fold(programme).split()) or len(words) == 1 else None


def _tidy(text: str) -> str:
    """A qualifier as staff would write it: "CHẤT LƯỢNG CAO ĐỊNH HƯỚNG NHẬT BẢN" in lower case
    with its first letter kept."""
    text = " ".join(text.split())
    if text.isupper():
        text = text[:1] + text[1:].lower()
    return text


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


__all__ = ["CUTOFF", "extract_facts", "read_number"]
