"""Years and dates in the knowledge (2/4): which year a text speaks of, until when it holds, and
the admission year "năm nay" means.

- An FAQ entry's **year** is the one year its question and answer name (a school year
  "2026–2027" is 2026); several other years, or none, is no year.
- Its **valid-until** date is the latest date its answer names that was still to come when the
  entry was written ("hạn nộp hồ sơ đến 20/7/2026" written in June 2026): after it the answer is
  about something past. Dates already past when it was written are history ("thành lập ngày
  1/1/2010"), not an end. Staff may set or clear it.
- A document's **year** is the one its title names, else the one its text names; its
  **valid-until** date is read like an entry's, over its whole text (the last deadline of a
  notice), so a notice whose dates have all passed is listed for staff.
- The **admission year** is the setting, else the latest year the documents' titles name (a
  title's school year "2026–2027" is 2026), up to next calendar year: a page of last year's
  cut-offs beside this year's handbook is last year's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from retrieval.text.folding import fold

_YEAR = re.compile(r"(?<!\d)(20\d\d)(?!\d)")
_DMY = re.compile(r"(?<![\d/])(\d{1,2})\s*/\s*(\d{1,2})\s*/\s*(20\d\d)(?!\d)")
_WORDS = re.compile(r"\bngay (\d{1,2}) thang (\d{1,2}) nam (20\d\d)\b")


def years_in(text: str) -> set[int]:
    return {int(y) for y in _YEAR.findall(text)}


def dates_in(text: str) -> list[date]:
    """The full dates ``text`` names: "20/7/2026", "ngày 20 tháng 7 năm 2026"."""
    found = []
    for day, month, year in [*_DMY.findall(text), *_WORDS.findall(fold(text))]:
        try:
            found.append(date(int(year), int(month), int(day)))
        except ValueError:
            continue
    return found


def year_of(*texts: str) -> int | None:
    """The one year ``texts`` speak of (a school year "2026–2027" is its first), else None."""
    years = set().union(*(years_in(t) for t in texts))
    if len(years) == 1:
        return years.pop()
    if len(years) == 2 and max(years) - min(years) == 1:
        return min(years)
    return None


def valid_until(answer: str, written: date) -> date | None:
    """The latest date of ``answer`` on or after ``written``, or None."""
    ahead = [d for d in dates_in(answer) if d >= written]
    return max(ahead) if ahead else None


def admission_year(setting: int, titles: Iterable[str], today: date) -> int:
    """The setting, else the latest year the titles name up to next year, else this year."""
    if setting:
        return setting
    named = [y for y in map(year_of, titles) if y is not None and y <= today.year + 1]
    return max(named, default=today.year)


def document_validity(title: str, text: str, written: date) -> tuple[int | None, date | None]:
    """The year a document speaks of and the day it holds until, as ``title`` and ``text`` say."""
    year = year_of(title)
    if year is None and not years_in(title):
        year = year_of(text)
    return year, valid_until(text, written)
