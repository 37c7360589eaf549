"""What a question asks, as the guard's vocabulary reads it: the kinds of value, whom or what it
is about (each value with the words that said it), a list or not. Made once per text a message
gives (bot.answer.read): every step after takes it instead of reading the text again."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets, Span
from retrieval.text.folding import fold
from retrieval.text.pack import alternatives, load_pack
from retrieval.text.terms import TextProcessor, tokens

# From the language pack (listing): "những ngành nào" lists the values of a guard category,
# which the answer must name; "gồm những gì", "các phương thức" ask for a list.
_LISTED = load_pack().listing.listed
_LISTING = re.compile(rf"\b{alternatives(load_pack().listing.asks)}\b")
# "cách đăng ký ktx ntn", "thủ tục nhập học": it asks for the steps of a procedure.
_STEPS = re.compile(rf"\b{alternatives(load_pack().listing.steps)}\b")
# What a question can be about (follow_up.subjects): the values a list's every unit must name.
_SUBJECTS = load_pack().follow_up.subjects
# "ktx có cho nuôi mèo không ạ": what a yes-no question asks whether, the words between its last
# opener ("có", "được") and a closing "không" that ends the clause (particles aside).
_QUESTIONS = load_pack().questions
_OPENS = alternatives(_QUESTIONS.whether_opens)
_WHETHER = re.compile(
    rf"\b(?:{_OPENS}) (?P<thing>(?:(?!\b(?:{_OPENS})\b).)+?) "
    rf"(?:{alternatives(_QUESTIONS.whether_closes)})"
    rf"(?: (?:{alternatives(tuple(sorted(_QUESTIONS.closing | _QUESTIONS.closing_too)))}))*$"
)
# Question words inside what a yes-no question asks about (any but its closing "không"): it asks
# for them ("có biện pháp nào không"), not whether.
_ASKS_ITSELF = tuple(
    f" {p} "
    for p in (
        *_QUESTIONS.anywhere,
        *(w for w in _QUESTIONS.at_end if w not in _QUESTIONS.whether_closes),
    )
)
# Words that ask nothing between them ("được phép"), or say nothing of what any message asks
# ("trường", "sinh viên": follow_up.not_own).
_NOT_ASKED = _QUESTIONS.whether_not_asked | load_pack().follow_up.not_own
# "hp 1 kỳ bn": the period a figure is asked per (questions.per), by the folded words asking it.
_PER = {w: name for name, (asked, _) in _QUESTIONS.per_periods.items() for w in asked}
_ASKS_PER = re.compile(
    rf"\b{alternatives(_QUESTIONS.per_marks)} (?:hoc )?(?P<period>{alternatives(tuple(_PER))})\b"
    rf"(?! {alternatives(_QUESTIONS.per_not_followed_by)}\b)"
)


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
    # Every value the guard reads in it, by category, and where the text says each.
    facets: Facets = field(default_factory=dict)
    spans: tuple[Span, ...] = ()
    text: str = ""  # what was read
    # Which guard read it (its ``id``): the same text is not read again by the same vocabulary.
    vocabulary: int = field(default=0, compare=False)
    # It asks how to do something: a step of a numbered list is quoted with the whole list.
    steps: bool = False
    # A yes-no question's words for what it asks whether, less the vocabulary's ("ktx có cho
    # nuôi mèo không": "nuoi meo"): an answer must hold one of them (folded phrases).
    whether: tuple[str, ...] = ()
    # The periods a figure is asked per ("1 kỳ": "semester", questions.per): a quoted unit, or
    # its label, must name one.
    per: frozenset[str] = frozenset()

    def without_guard(self) -> Reading:
        """What is read without the guard's vocabulary (``TUVAN_ANSWER__NEAR_MISS_GUARD``
        off): a list or not, and the pairs of words."""
        return Reading(listing=self.listing, pairs=self.pairs, text=self.text, steps=self.steps)

    def said(self, category: str) -> list[str]:
        """The values of ``category`` in the order the text says them (where their words end)."""
        ends: dict[str, int] = {}
        for span in self.spans:
            if span.category == category:
                ends[span.value] = min(ends.get(span.value, span.end), span.end)
        named = self.facets.get(category, frozenset())
        return sorted(named, key=lambda v: (ends.get(v, 1 << 30), v))


def read_question(
    question: str, guard: NearMissGuard | None, processor: TextProcessor | None = None
) -> Reading:
    listing = bool(_LISTING.search(fold(question)))
    steps = bool(_STEPS.search(fold(question)))
    pairs = word_pairs(question)
    if processor is not None:
        # Pairs of words that say something: not "ngành nào", "là bao", "có những".
        pairs = frozenset(
            p for p in pairs if processor.query_terms(p[0]) and processor.query_terms(p[1])
        )
    if guard is None:
        return Reading(listing=listing, pairs=pairs, text=question, steps=steps)
    facets = guard.facets(question)
    spans = guard.spans(question)
    kinds = guard.asked_kinds(question)
    listed = next(
        (
            c
            for noun, c in _LISTED.items()
            if re.search(rf"\b(?:nhung|cac|may) {noun}\b", fold(question))
        ),
        None,
    )
    return Reading(
        kinds,
        kinds | guard.kinds_of(facets),
        guard.entities_of(facets),
        listing,
        pairs,
        listed if listing else None,
        guard.attributes_of(facets),
        {c: v for c, v in facets.items() if c in _SUBJECTS and c != listed},
        facets,
        spans,
        question,
        id(guard),
        steps,
        whether_words(question, spans),
        periods_asked(question),
    )


def periods_asked(question: str) -> frozenset[str]:
    """The periods ``question`` asks a figure per ("hp 1 kỳ bn": semester), as the pack names
    them."""
    folded = fold(question).lower()
    return frozenset(_PER[m.group("period")] for m in _ASKS_PER.finditer(folded))


def names_period(periods: frozenset[str], text: str) -> bool:
    """Whether ``text`` names one of ``periods`` in the words a unit says it in ("học kỳ"),
    those written with marks as written, the others folded ("hoc ky")."""
    lower, folded = text.lower(), fold(text).lower()
    for period in periods:
        for words in _QUESTIONS.per_periods[period][1]:
            where = folded if words.isascii() else lower
            if re.search(rf"(?<!\w){re.escape(words)}(?!\w)", where):
                return True
    return False


def whether_words(question: str, spans: Sequence[Span]) -> tuple[str, ...]:
    """What a yes-no question asks whether, as folded phrases, without the words naming a value
    the vocabulary reads (its ``spans``: "ktx", "học bổng", "ngành cntt") or asking nothing
    ("được phép", "khác nhau"): what a unit answering it must say. Nothing when the words between
    ask a question of their own ("có biện pháp nào không" asks for them, "có bị gì không" what)."""
    masked = question
    for span in sorted(spans, key=lambda s: -s.start):
        masked = f"{masked[: span.start]} {masked[span.end :]}"
    phrases = []
    for clause in re.split(r"[?!.;,]", masked):
        found = _WHETHER.search(" ".join(tokens(clause)))
        if found is None or any(p in f" {found.group('thing')} " for p in _ASKS_ITSELF):
            continue
        words = found.group("thing").split()
        if words[0] in _QUESTIONS.whether_verbs:
            words = words[1:]
        kept = " ".join(w for w in words if w not in _NOT_ASKED)
        if kept:
            phrases.append(kept)
    return tuple(phrases)


def word_pairs(text: str) -> frozenset[tuple[str, str]]:
    words = tokens(text)
    return frozenset(itertools.pairwise(words))
