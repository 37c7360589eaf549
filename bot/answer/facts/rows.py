"""The rows of the facts tables a question leaves possible: of the major and attribute asked,
the latest year that has one (or the year asked), one per programme, method and campus."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import replace

from bot.answer.facts.question import FactsQuestion
from retrieval.facts.book import FactsBook, Major
from retrieval.facts.cells import is_code
from retrieval.facts.model import COMBINATIONS, FEE, Fact
from retrieval.text.folding import fold

_CLOSEST = 3
_TOP_SCORE = 40.0  # a score above this is on a thousands scale (ĐGNL)


def rows_for(
    book: FactsBook,
    major: Major,
    attribute: str,
    asked: FactsQuestion,
    on_scale_of: float | None = None,
) -> list[Fact]:
    """The facts of ``major`` for ``attribute`` that the question leaves possible, of the latest
    year that has one (or the year asked, or each of the years compared); one per programme,
    method and year."""
    rows = [
        f
        for f in book.facts
        if f.attribute == attribute
        and fold(f.major) == fold(major.name)
        # "clc so với hệ chuẩn": that programme's and the standard one's
        and (
            asked.programme is None
            or f.programme == asked.programme
            or (asked.standard and f.programme is None)
        )
        and (asked.method is None or f.method in (asked.method, None) or attribute == COMBINATIONS)
        and (asked.year is None or f.year == asked.year)
        and (asked.campus is None or f.campus in (asked.campus, None))
    ]
    if on_scale_of is not None:
        rows = [f for f in rows if not f.offered or f.value is None or _same_scale(on_scale_of, f)]
        if asked.method is None:
            rows = [f for f in rows if f.offered]
    if asked.method is not None and attribute != COMBINATIONS:
        exact = [f for f in rows if f.method == asked.method]
        rows = exact or rows
    if asked.campus is not None:
        rows = [f for f in rows if f.campus == asked.campus] or rows
    if not rows:
        return []
    # "so 2024 vs 2025": each year named that a row has; else the latest
    named = asked.years & {f.year for f in rows} if len(asked.years) > 1 else set()
    years = named or {max(f.year for f in rows)}
    latest = [f for f in rows if f.year in years]
    if attribute == FEE and asked.per is not None:
        per = [f for f in latest if (f.unit or "").endswith(f"/{asked.per}")]
        latest = per or latest
    seen: dict[tuple[str | int | None, ...], Fact] = {}
    for f in latest:
        seen.setdefault((f.programme, f.method, f.unit, f.campus, f.year), f)
    # The standard programme first, each programme's methods in the table's order.
    return sorted(seen.values(), key=lambda f: (f.programme is not None, f.programme or "", f.year))


def rows_for_all(
    book: FactsBook, majors: Sequence[Major], attribute: str, asked: FactsQuestion, score: float
) -> list[Fact]:
    return [f for m in majors for f in rows_for(book, m, attribute, asked, on_scale_of=score)]


def _same_scale(score: float, fact: Fact) -> bool:
    """Whether a student's score can be set against a cut-off: within the scale the document
    states, else within half to twice the cut-off (an HSA 100 is no ĐGNL 900, a THPT 25 no
    SAT 1341)."""
    assert fact.value is not None
    if fact.scale is not None:
        return score <= fact.scale and (score > _TOP_SCORE) == (fact.value > _TOP_SCORE)
    return fact.value / 2 <= score <= fact.value * 2


def cell(fact: Fact) -> tuple[str | None, str | None, int, str | None]:
    """Where a major's value sits in its table: another major's in the same place compares."""
    return fact.programme, fact.method, fact.year, fact.campus


def year_held(
    asked: FactsQuestion, book: FactsBook, attribute: str
) -> tuple[FactsQuestion, int | None]:
    """The question as the tables can answer it: "năm nay" that no fact of ``attribute`` has
    yet is dropped (the latest year answers, and it is said that this year's is not there); a
    year named in so many words that the tables lack stays, and nothing is answered."""
    if (
        asked.year is None
        or not asked.this_year
        or any(f.attribute == attribute and f.year == asked.year for f in book.facts)
    ):
        return asked, None
    return replace(asked, year=None), asked.year


def closest_majors(name: str, book: FactsBook) -> list[Major]:
    key = fold(name)
    scored = sorted(
        ((difflib.SequenceMatcher(None, key, fold(m.name)).ratio(), m) for m in book.majors),
        key=lambda sm: -sm[0],
    )
    return [m for score, m in scored[:_CLOSEST] if score >= 0.5]


def named_majors(majors: Sequence[Major]) -> list[str]:
    """The majors' names, leaving out those known only by a code (a row that gave no name)."""
    return [m.name for m in majors if not is_code(m.name)]
