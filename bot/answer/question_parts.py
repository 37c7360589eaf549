"""A question asked in parts, as its answer names them: what each part asks, in clean words, and
whether what was quoted for the other parts already answers it.

The student's own words make poor headings ("hoc phi nganh cntt bn:"): a part is named by the
attributes the near-miss guard's vocabulary reads in it ("Học phí", "Ký túc xá, địa điểm"), in
the order the part names them, with the entities that tell two parts apart when they ask the
same thing ("Học phí (Khoa học máy tính)", "Học phí (Công nghệ thông tin)"). A part that names no
attribute has no name: then no part gets a heading and the quotes are listed in the parts' order.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.guard.checks import NearMissGuard

_ATTRIBUTE = "attribute"


def asked_attributes(text: str, guard: NearMissGuard) -> list[str]:
    """The attributes ``text`` names ("học phí", "chỉ tiêu"), in the order it names them."""
    named = guard.facets(text).get(_ATTRIBUTE, frozenset())
    if not named:
        return []
    words = text.split()
    order: dict[str, int] = {}
    for end in range(1, len(words) + 1):
        for value in guard.facets(" ".join(words[:end])).get(_ATTRIBUTE, frozenset()):
            order.setdefault(value, end)
    return sorted(named, key=lambda v: (order.get(v, len(words) + 1), v))


def part_labels(parts: Sequence[str], guard: NearMissGuard | None) -> list[str] | None:
    """A heading for each part (its own words, ``parts``), or None when one names no attribute
    or two would read the same."""
    if guard is None:
        return None
    asked = [asked_attributes(part, guard) for part in parts]
    if not all(asked):
        return None
    labels = [_sentence_case(", ".join(values)) for values in asked]
    if len(set(labels)) < len(labels):
        labels = [
            _qualified(label, part, parts, guard) for label, part in zip(labels, parts, strict=True)
        ]
    return labels if len(set(labels)) == len(labels) else None


def what_is_missing(part: str, guard: NearMissGuard | None) -> str:
    """What a part the documents do not answer asks, as the closing line names it ("" if its
    words name no attribute)."""
    if guard is None:
        return ""
    return ", ".join(asked_attributes(part, guard))


def answered_by(part: str, quoted: str, guard: NearMissGuard | None) -> bool:
    """Whether ``quoted`` (the text already quoted for the other parts) answers ``part`` (its
    own words) as far as words tell: it names what the part asks and holds the kind of value
    the part asks for, if any; then the answer does not say the documents lack it."""
    if guard is None or not quoted:
        return False
    asked = guard.facets(part).get(_ATTRIBUTE, frozenset())
    kinds = guard.asked_kinds(part)
    holds = guard.holds(kinds, quoted) if kinds else not asked
    named = not asked or bool(asked & guard.facets(quoted).get(_ATTRIBUTE, frozenset()))
    return (bool(asked) or bool(kinds)) and named and holds


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _qualified(label: str, part: str, parts: Sequence[str], guard: NearMissGuard) -> str:
    """``label`` with the entities ``part`` names that not every part names: "Học phí (Khoa
    học máy tính)"."""
    mine = guard.entities(part)
    shared = [guard.entities(p) for p in parts]
    own = [
        value
        for category, values in mine.items()
        for value in sorted(values)
        if not all(value in other.get(category, frozenset()) for other in shared)
    ]
    return f"{label} ({', '.join(own)})" if own else label
