"""A question asked in parts, as its answer names them: what each part asks, in clean words, and
whether what was quoted for the other parts already answers it.

The student's own words make poor headings ("hoc phi nganh cntt bn:"): a part is named by the
attributes the near-miss guard's vocabulary reads in it ("Học phí", "Ký túc xá, địa điểm"), in
the order the part names them, with the entities that tell two parts apart when they ask the
same thing ("Học phí (Khoa học máy tính)", "Học phí (Công nghệ thông tin)"). A part that names no
attribute has no name: then no part gets a heading and the quotes are listed in the parts' order.
Each part comes read once (bot.answer.read: its own words' ``Reading``).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.answer.reading import Reading
from retrieval.guard.checks import NearMissGuard

_ATTRIBUTE = "attribute"


def part_labels(parts: Sequence[Reading], guard: NearMissGuard | None) -> list[str] | None:
    """A heading for each part (the reading of its own words), or None when one names no
    attribute or two would read the same."""
    if guard is None:
        return None
    asked = [part.said(_ATTRIBUTE) for part in parts]
    if not all(asked):
        return None
    labels = [_sentence_case(", ".join(values)) for values in asked]
    if len(set(labels)) < len(labels):
        labels = [_qualified(label, part, parts) for label, part in zip(labels, parts, strict=True)]
    return labels if len(set(labels)) == len(labels) else None


def what_is_missing(part: Reading, guard: NearMissGuard | None) -> str:
    """What a part the documents do not answer asks, as the closing line names it ("" if its
    words name no attribute)."""
    if guard is None:
        return ""
    return ", ".join(part.said(_ATTRIBUTE))


def answered_by(part: Reading, quoted: str, guard: NearMissGuard | None) -> bool:
    """Whether ``quoted`` (the text already quoted for the other parts) answers ``part`` (the
    reading of its own words) as far as words tell: it names what the part asks and holds the
    kind of value the part asks for, if any; then the answer does not say the documents lack
    it. A part that asks no kind of value ("tỉ lệ có việc làm cao không") is answered by a
    quote naming what it asks."""
    if guard is None or not quoted:
        return False
    asked = part.facets.get(_ATTRIBUTE, frozenset())
    kinds = part.kinds
    holds = guard.holds(kinds, quoted) if kinds else True
    named = not asked or bool(asked & guard.facets(quoted).get(_ATTRIBUTE, frozenset()))
    return (bool(asked) or bool(kinds)) and named and holds


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _qualified(label: str, part: Reading, parts: Sequence[Reading]) -> str:
    """``label`` with the entities ``part`` names that not every part names: "Học phí (Khoa
    học máy tính)"."""
    shared = [p.entities for p in parts]
    own = [
        value
        for category, values in part.entities.items()
        for value in sorted(values)
        if not all(value in other.get(category, frozenset()) for other in shared)
    ]
    return f"{label} ({', '.join(own)})" if own else label
