"""A category of the guard's vocabulary as read from the language pack's `guard` section: its
policy, its values' aliases and patterns, and what reads a value out of a match."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Policy:
    """How a category's values in a question and in an FAQ entry are compared."""

    mode: Literal["overlap", "equal"] = "overlap"
    query_only: bool = False  # a value in the question and none in the FAQ is a conflict
    faq_only: bool = False  # a value in the FAQ and none in the question is a conflict
    # Whether a value the question names must be said by the entry (its question or its
    # answer): "always" (one of the values named, as overlap reads them), "each" (every one:
    # a question that asks học phí and chỉ tiêu is not answered by an entry that gives only
    # one), "if_named" (only when the entry names some value of the category: an entry that
    # names no year stands for every year), or "no".
    covered: Literal["always", "each", "if_named", "no"] = "no"

    def conflicts(self, query: frozenset[str], faq: frozenset[str]) -> bool:
        if query and faq:
            return query != faq if self.mode == "equal" else query.isdisjoint(faq)
        if query:
            return self.query_only
        if faq:
            return self.faq_only
        return False


@dataclass(frozen=True)
class Extractor:
    """A pattern and how a match becomes a value."""

    pattern: re.Pattern[str]
    value: str | None = None  # fixed for a value's own patterns; else the group "v" or the match
    scale: float | None = None  # unit conversion of a numeric "v" (years -> semesters)

    def read(self, match: re.Match[str]) -> str:
        if self.value is not None:
            return self.value
        text = match.group("v") if "v" in self.pattern.groupindex else match.group(0)
        text = text.replace("_", ".")
        if self.scale is not None:
            return f"{float(text) * self.scale:g}"
        return text


@dataclass(frozen=True)
class Category:
    """One category of facets (a major, a year, an attribute...) as the guard compares it."""

    name: str
    policy: Policy
    not_after: tuple[tuple[str, ...], ...]
    patterns: tuple[Extractor, ...]
    label: str = ""
    # value -> the kinds of value (the guard's ``kinds``) whose presence in an answer covers it
    kinds: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # values that ask only for their kind ("bao nhiêu tiền"): no conflict with a value sharing it
    generic: frozenset[str] = frozenset()
    # ``not_after`` as written, lower case, marks kept ("viện"): a text written with its marks
    # must say that word, not one that folds alike ("nghiên cứu viên Kỹ thuật Phần mềm")
    not_after_written: tuple[tuple[str, ...], ...] = ()

    def compatible(self, asked: frozenset[str], named: frozenset[str]) -> bool:
        """Whether every value asked is generic and shares a kind with a value named."""
        theirs = {k for v in named for k in self.kinds.get(v, ())}
        return bool(asked) and all(
            v in self.generic and theirs.intersection(self.kinds.get(v, ())) for v in asked
        )


def pattern_extractor(spec: Any) -> Extractor:
    """The extractor of a category-wide pattern: a regex, or {regex, scale}."""
    if isinstance(spec, Mapping):
        if set(spec) - {"regex", "scale"} or "regex" not in spec:
            raise ValueError(f"a pattern is a regex or {{regex, scale}}, not {spec!r}")
        scale = spec.get("scale")
        return Extractor(re.compile(str(spec["regex"])), None, float(scale) if scale else None)
    return Extractor(re.compile(str(spec)))


def value_spec(aliases: Any) -> tuple[list[Any], list[str]]:
    """A value's aliases and patterns, from either form the guard section allows."""
    if aliases is None:
        return [], []
    if isinstance(aliases, list):
        return aliases, []
    if isinstance(aliases, Mapping) and set(aliases) <= {"aliases", "patterns", "kinds", "generic"}:
        return list(aliases.get("aliases") or []), [str(p) for p in aliases.get("patterns") or []]
    raise ValueError(
        f"a value takes a list of aliases or {{aliases, patterns, kinds, generic}}, not {aliases!r}"
    )
