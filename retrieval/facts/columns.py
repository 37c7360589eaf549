"""A table's value columns: what each holds (attribute, method, year, campus, currency and
what an amount is per), read from its header and the table's context, and one cell of such a
column read as a fact or left out with its reason."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from retrieval.facts.cells import KIND_OF, read_number
from retrieval.facts.context import TableContext
from retrieval.facts.model import Fact, Place, Rejected
from retrieval.facts.tables import Table
from retrieval.guard.checks import NearMissGuard
from retrieval.text.folding import fold
from retrieval.text.pack import load_pack

_WORDS = load_pack().facts
_NOT_OFFERED = frozenset(fold(c) for c in _WORDS.not_offered) | frozenset(_WORDS.not_offered)
# A currency as written in a header or a cell ("triệu đồng", "đồng", "VNĐ", "USD").
_CURRENCY = re.compile(r"(?:triệu |nghìn |ngàn )?(?:đồng|vnđ|vnd|usd|aud)|triệu", re.I)


@dataclass(frozen=True)
class ValueColumn:
    """A value column of a table, as read: what its values are, for which method and year,
    and the currency its header names."""

    index: int
    attribute: str | None
    method: str | None
    year: int | None
    unit: str | None
    campus: str | None = None  # the one campus its header names ("Chỉ tiêu Hà Nội")


def value_columns(
    table: Table,
    headers: list[str],
    taken: set[int | None],
    context: TableContext,
    guard: NearMissGuard,
) -> list[ValueColumn]:
    read: list[tuple[int, str | None, str | None, frozenset[str] | None, str | None]] = []
    campuses: dict[int, str | None] = {}
    table_campus = context.campus()
    for index, header in enumerate(table.header):
        if index in taken or not headers[index] or headers[index] in {"stt", "tt", "#", "so tt"}:
            continue
        facets = guard.facets(header)
        attribute = attribute_of(facets.get("attribute"))
        method = method_of(facets.get("method"), headers[index])
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
    table_attribute = attribute_of(context.first("attribute"))
    table_method = method_of(context.first("method"), " ".join(context.texts))
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
            ValueColumn(
                index, attribute, method or table_method, context.year(years), unit, campuses[index]
            )
        )
    return columns


def one_each(
    columns: list[ValueColumn], header: tuple[str, ...]
) -> tuple[list[ValueColumn], list[int]]:
    """The columns that alone hold their attribute for their method, year and campus (and, for
    an amount, what it is per), and the others: "SAT" and "ACT" both read as an international
    certificate cannot be told apart by a question, so neither is used; nor are two campus
    columns whose campus the vocabulary does not know ("BVH", "BVS")."""

    def key(c: ValueColumn) -> tuple[str | None, str | None, int | None, str | None, str | None]:
        return c.attribute, c.method, c.year, period_of(header[c.index]), c.campus

    counts = Counter(key(c) for c in columns)
    kept = [c for c in columns if counts[key(c)] == 1]
    return kept, [c.index for c in columns if counts[key(c)] > 1]


def column_of(headers: list[str], names: tuple[str, ...]) -> int | None:
    """The first column whose folded header is one of ``names`` or starts with one of them."""
    for index, header in enumerate(headers):
        if any(header == n or header.startswith(n + " ") for n in names):
            return index
    return None


def attribute_of(values: frozenset[str] | None) -> str | None:
    found = [v for v in values or () if fold(v) in KIND_OF]
    return found[0] if len(found) == 1 else None


def method_of(values: frozenset[str] | None, folded_text: str) -> str | None:
    found = set(values or ())
    for word, method in _WORDS.column_methods.items():
        if re.search(rf"\b{re.escape(word)}\b", folded_text):
            found.add(method)
    return next(iter(found)) if len(found) == 1 else None


def value_fact(
    column: ValueColumn,
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
    kind = KIND_OF[fold(attribute)]
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
        per = period_of(place.column)
        return replace(base, value=value, unit=f"{currency}/{per}" if per else currency)
    return replace(base, value=value)


def period_of(header: str) -> str | None:
    """What an amount's column is per ("Học phí/năm": năm), from the language pack."""
    folded = fold(header)
    for word, per in _WORDS.periods.items():
        if re.search(rf"(?:/\s*|\bmoi |\bper |\bmot ){re.escape(word)}\b", folded):
            return per
    return None
