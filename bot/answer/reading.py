"""What a question asks, as tier 2 reads it: the kinds of value, whom it is about, a list or not."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets
from retrieval.text.folding import fold
from retrieval.text.pack import alternatives, load_pack
from retrieval.text.terms import TextProcessor, tokens

# From the language pack (listing): "những ngành nào" lists the values of a guard category,
# which the answer must name; "gồm những gì", "các phương thức" ask for a list.
_LISTED = load_pack().listing.listed
_LISTING = re.compile(rf"\b{alternatives(load_pack().listing.asks)}\b")
# What a question can be about (follow_up.subjects): the values a list's every unit must name.
_SUBJECTS = load_pack().follow_up.subjects


@dataclass(frozen=True)
class Reading:
    """What a question asks, as tier 2 reads it (3/6, with the near-miss guard's vocabulary):
    the kinds of value asked (a phone number, an amount, a date...), whom or what it is about
    (a major, a year, a method...), and whether it asks for a list."""

    kinds: frozenset[str] = frozenset()  # asked in so many words: none held, no answer
    hints: frozenset[str] = frozenset()  # those of the attributes it names: favoured
    entities: Facets = field(default_factory=dict)
    listing: bool = False
    pairs: frozenset[tuple[str, str]] = frozenset()  # its adjacent folded words
    listed: str | None = None  # "những ngành nào" lists values of a category (major)
    # What it asks in the guard's "attribute" category (học phí, chỉ tiêu, điểm chuẩn…): a
    # quoted unit must say one of them, or hold its kind of value (1/4).
    attributes: frozenset[str] = frozenset()
    # Whom or what it is about, in the subject categories (a major, a scholarship, a topic…):
    # past the first unit, a list answer quotes only units about them.
    subjects: Facets = field(default_factory=dict)


def read_question(
    question: str, guard: NearMissGuard | None, processor: TextProcessor | None = None
) -> Reading:
    listing = bool(_LISTING.search(fold(question)))
    pairs = word_pairs(question)
    if processor is not None:
        # Pairs of words that say something: not "ngành nào", "là bao", "có những".
        pairs = frozenset(
            p for p in pairs if processor.query_terms(p[0]) and processor.query_terms(p[1])
        )
    if guard is None:
        return Reading(listing=listing, pairs=pairs)
    kinds = guard.asked_kinds(question)
    listed = next(
        (
            c
            for noun, c in _LISTED.items()
            if re.search(rf"\b(?:nhung|cac|may) {noun}\b", fold(question))
        ),
        None,
    )
    facets = guard.facets(question)
    return Reading(
        kinds,
        kinds | guard.hinted_kinds(question),
        guard.entities(question),
        listing,
        pairs,
        listed if listing else None,
        guard.asked_attributes(question),
        {c: v for c, v in facets.items() if c in _SUBJECTS and c != listed},
    )


def word_pairs(text: str) -> frozenset[tuple[str, str]]:
    words = tokens(text)
    return frozenset(itertools.pairwise(words))
