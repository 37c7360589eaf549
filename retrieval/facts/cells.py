"""What a table's cell holds: a number as Vietnamese or English write it, a major's code, and
the kind of values an attribute has (a score, a count or an amount)."""

from __future__ import annotations

import re

from retrieval.text.folding import fold
from retrieval.text.pack import load_pack

KIND_OF = dict(load_pack().facts.attributes)  # folded attribute -> score | count | amount
_NUMBER = re.compile(r"^\d{1,3}(?:[.,]\d{3})+$|^\d+(?:[.,]\d+)?$")
_THOUSANDS = re.compile(r"^\d{1,3}(?:\.\d{3})+$")
CODE = re.compile(r"^\d{5}[0-9A-Za-z]{1,3}(?:[_-][0-9A-Za-z]+)*$")


def is_code(text: str) -> bool:
    """Whether ``text`` is a major's code ("7480101", "7480201_CLC"), not a name."""
    return bool(CODE.match(text.strip()))


def value_kind(attribute: str) -> str:
    """What an attribute's values are: a score, a count or an amount."""
    return KIND_OF.get(fold(attribute), "score")


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
