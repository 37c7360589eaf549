"""What the text around a table says: its headings, the text before it and the document's
title, read by the guard for the year, attribute, method, campus and programme its values are
of."""

from __future__ import annotations

import re

from retrieval.facts.tables import Table
from retrieval.guard.checks import NearMissGuard
from retrieval.text.folding import fold
from retrieval.text.pack import load_pack

_WORDS = load_pack().facts
_CAMPUS_WORDS = re.compile(r"\b(?:co so|campus|phan hieu)\b")


class TableContext:
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
