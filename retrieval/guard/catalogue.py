"""The school's own majors and campuses, from its catalogue, added to the guard's vocabulary
(2/4).

The bundled vocabulary names the majors common to Vietnamese schools; a school's catalogue
(retrieval.facts) names its own, with their codes and the aliases staff give them. Both tier 1
and tier 2 read a question's major through the guard, so a major only the catalogue knows
("Công nghệ chế biến lâm sản" beside "Công nghệ thực phẩm") must be in it, or a question about
one is matched to an entry about the other.

- A catalogue major that is a bundled value (by name, alias or code) only adds its name, code
  and aliases to that value; one that is not becomes a value of its own.
- A name of one or two words ("Thú y", "Dược học") is read only after "ngành": alone it is too
  often an ordinary word of a sentence. Aliases staff give are read as given.
- Initials are not added: "kt" or "qtkd" read from a name may name something else; staff add
  the ones students use as aliases.
- A campus's aliases staff give ("BVH" for "Hà Nội") are added to the campus category: a
  question naming one is read as that campus, and so is a table column at the next ingest
  (the serving processes read documents with this guard).
- The words for a year said relative to the admission year ("năm ngoái") are added to the year
  category as that year: "chỉ tiêu năm ngoái" asks the quota of 2025 when the school admits
  for 2026, and a unit about 2026 does not answer it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from retrieval.guard.categories import value_spec
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.vocabulary import merge_vocabulary
from retrieval.text.folding import fold

MAJOR = "major"
CAMPUS = "campus"
YEAR = "year"
_SHORT = 3  # words: a shorter name is read only after "ngành"


def school_majors(
    majors: Iterable[tuple[str, str | None, Iterable[str]]],
    vocabulary: Mapping[str, Any],
) -> dict[str, list[str]]:
    """The guard values to add for ``majors`` (name, code, aliases): canonical -> aliases."""
    bundled = ((vocabulary.get("categories") or {}).get(MAJOR) or {}).get("values") or {}
    owner: dict[str, str] = {}
    for canonical, spec in bundled.items():
        spelled, _ = value_spec(spec)
        for name in (canonical, *spelled):
            owner.setdefault(fold(str(name)), str(canonical))
    added: dict[str, list[str]] = {}
    for name, code, aliases in majors:
        names = [name, *aliases]
        ways = [*names, *([code] if code and code.isalnum() else [])]
        canonical = next((owner[fold(n)] for n in ways if fold(n) in owner), _said(name))
        said = added.setdefault(canonical, [])
        for way in ways:
            way = _said(way) if way == name and fold(way) not in owner else way
            if fold(way) not in owner and fold(way) != fold(canonical) and way not in said:
                said.append(way)
    return {value: said for value, said in added.items() if said or value not in bundled}


def _said(name: str) -> str:
    return name if len(name.split()) >= _SHORT else f"ngành {name}"


def guard_with_catalogue(
    base: NearMissGuard,
    majors: Iterable[tuple[str, str | None, Iterable[str]]],
    campuses: Mapping[str, Iterable[str]] | None = None,
    years: Mapping[int, Iterable[str]] | None = None,
) -> NearMissGuard:
    """``base`` with the school's ``majors``, ``campuses`` (name -> aliases) and the words that
    say a year relative to its admission year (``years``: year -> words) in its vocabulary
    (``base`` itself when none add anything)."""
    values = school_majors(majors, base.vocabulary)
    categories: dict[str, Any] = {MAJOR: {"values": values}} if values else {}
    named = {name: list(aliases) for name, aliases in (campuses or {}).items() if aliases}
    if named:
        categories[CAMPUS] = {"values": named}
    said = {str(year): list(words) for year, words in (years or {}).items() if words}
    if said:
        categories[YEAR] = {"values": said}
    if not categories:
        return base
    return NearMissGuard(merge_vocabulary(base.vocabulary, {"categories": categories}))
