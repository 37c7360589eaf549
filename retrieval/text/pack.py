"""The language pack: the words every rule reads a message by, from retrieval/data/language.yaml.

Question words, particles and vocatives, small-talk phrases, follow-up marks, list questions and
the near-miss guard's vocabulary live in that one file (its header says how entries are written).
It is read and checked once, when first asked for; a missing section or key, an entry of the
wrong type, a word that is not folded or a pattern that does not compile is a ConfigError naming
the section and the key. The rules (retrieval.query, bot.answer.small_talk, bot.answer.followup,
bot.answer.reading) build their regular expressions from what it holds; the guard's section is
read by retrieval.guard, which checks it in detail.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeGuard

from bot.core.errors import ConfigError
from retrieval.text.datafiles import DATA_DIR, read_yaml

PACK_FILE = DATA_DIR / "language.yaml"
SECTIONS = ("questions", "small_talk", "follow_up", "listing", "facts", "guard")

PhraseKind = Literal["greeting", "thanks", "goodbye", "opener"]
_PHRASE_KINDS: tuple[PhraseKind, ...] = ("greeting", "thanks", "goodbye", "opener")
# What a folded entry looks like: what retrieval.text.folding.fold leaves of a phrase.
_FOLDED = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")
# Stands in a filler for any number of vocatives (questions.fillers).
VOCATIVES_SLOT = "{vocatives}"


@dataclass(frozen=True)
class QuestionWords:
    anywhere: tuple[str, ...]  # ask wherever they stand
    at_end: tuple[str, ...]  # ask only at the end of a clause
    with_marks: tuple[str, ...]  # checked unfolded ("mấy")
    closing: frozenset[str]  # particles and vocatives that close a chat question
    closing_too: frozenset[str]  # also skipped before a final question word
    vocatives: tuple[str, ...]
    fillers: tuple[str, ...]  # patterns; VOCATIVES_SLOT where vocatives may follow
    part_asks: tuple[str, ...]
    part_asks_first: tuple[str, ...]
    whether_opens: tuple[str, ...]  # a yes-no question's words before what it asks whether
    whether_closes: tuple[str, ...]  # and after it
    whether_not_asked: frozenset[str]  # words between them that ask nothing
    whether_verbs: frozenset[str]  # first between them, they ask nothing either
    per_marks: tuple[str, ...]  # "1", "mỗi" before a period a figure is asked per
    per_not_followed_by: tuple[str, ...]  # "một kỹ năng": no period
    # each period: the folded words a question says it in, and the words a unit names it in
    per_periods: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]


@dataclass(frozen=True)
class SmallTalkWords:
    padding: tuple[str, ...]
    kinds: tuple[tuple[PhraseKind, tuple[str, ...]], ...]  # in the order they are tried
    leading: tuple[str, ...]  # patterns: "ad ơi", "cho em hỏi" (openers taken off a question)
    after_leading: tuple[str, ...]  # words that go with them ("ạ", "là")
    human: tuple[str, ...]  # patterns
    asking: tuple[str, ...]  # patterns
    about_staff: tuple[str, ...]


@dataclass(frozen=True)
class FollowUpWords:
    starts: tuple[str, ...]
    not_starts: tuple[str, ...]
    ends: tuple[str, ...]
    max_words: int
    max_elliptical_words: int
    reference_nouns: Mapping[str, str]  # noun -> the guard category it refers to
    # nouns that refer to the previous question's subject, whatever its category ("bên đó")
    reference_any: tuple[str, ...]
    reference_determiners: tuple[str, ...]
    reference_pronouns: tuple[str, ...]  # "của nó": the previous subject, as reference_any
    subjects: tuple[str, ...]
    carried: tuple[str, ...]
    # attributes (folded) asked of the school itself: a part asking only those takes no name
    # from the other parts of its message
    of_the_school: frozenset[str]
    not_a_topic: frozenset[str]
    not_own: frozenset[str]


@dataclass(frozen=True)
class ListingWords:
    asks: tuple[str, ...]  # patterns
    listed: Mapping[str, str]  # noun -> the guard category whose values are listed
    steps: tuple[str, ...]  # patterns: the question asks how to do something


@dataclass(frozen=True)
class FactsWords:
    """How a facts table's columns are read, and the words of the questions answered from the
    tables (retrieval.facts, bot.answer.facts)."""

    name_columns: tuple[str, ...]
    code_columns: tuple[str, ...]
    combination_columns: tuple[str, ...]
    column_methods: Mapping[str, str]  # folded header word -> the guard's method value
    attributes: Mapping[str, str]  # folded attribute -> its kind of value
    periods: Mapping[str, str]  # folded word of an amount's column -> what it is per
    not_offered: tuple[str, ...]  # cells as written
    standard_programme: tuple[str, ...]
    standard_asked: tuple[str, ...]  # a question naming the standard programme
    score_check: tuple[str, ...]  # patterns
    offer: tuple[str, ...]  # patterns with a group `name`
    offer_programme: tuple[str, ...]  # patterns
    asks_whether: tuple[str, ...]  # patterns
    highest: tuple[str, ...]
    lowest: tuple[str, ...]
    more: tuple[str, ...]
    less: tuple[str, ...]
    this_year: tuple[str, ...]
    last_year: tuple[str, ...]
    every_major: frozenset[str]  # words of a question asking for every major besides the list
    points: frozenset[str]  # what a score is called, after its number
    not_a_name: frozenset[str]  # words after "có ngành" that name no major ("mới", "nào", "hot")


_VALUE_KINDS = frozenset({"score", "count", "amount"})


@dataclass(frozen=True)
class LanguagePack:
    questions: QuestionWords
    small_talk: SmallTalkWords
    follow_up: FollowUpWords
    listing: ListingWords
    facts: FactsWords
    guard: Mapping[str, Any]  # the guard's vocabulary, as retrieval.guard reads it


def alternatives(entries: tuple[str, ...]) -> str:
    """One regular-expression group trying ``entries`` in order: ``(?:a|b|c)``."""
    return "(?:" + "|".join(entries) + ")"


@lru_cache(maxsize=1)
def load_pack() -> LanguagePack:
    """The bundled pack, read and checked once."""
    return read_pack(PACK_FILE)


def read_pack(path: Path) -> LanguagePack:
    """The pack in ``path``, or ConfigError naming the section and key that are wrong."""
    data = read_yaml(path)
    missing = [s for s in SECTIONS if s not in data]
    unknown = sorted(set(data) - set(SECTIONS))
    if missing or unknown:
        raise ConfigError(f"{path}: missing sections {missing}, unknown sections {unknown}")
    guard = _Section(f"{path}: section `guard`", data["guard"]).raw
    categories = guard.get("categories")
    if not isinstance(categories, Mapping) or not categories:
        raise ConfigError(f"{path}: section `guard`: `categories` must be a non-empty mapping")
    names = frozenset(str(c) for c in categories)
    questions, small_talk, follow_up, listing, facts = (
        _Section(f"{path}: section `{name}`", data[name])
        for name in ("questions", "small_talk", "follow_up", "listing", "facts")
    )
    reference = follow_up.part("reference")
    per = questions.part("per")
    pack = LanguagePack(
        questions=QuestionWords(
            anywhere=questions.words("anywhere"),
            at_end=questions.words("at_end"),
            with_marks=questions.strings("with_marks"),
            closing=frozenset(questions.words("closing")),
            closing_too=frozenset(questions.words("closing_too")),
            vocatives=questions.words("vocatives"),
            fillers=questions.patterns("fillers", slot=VOCATIVES_SLOT),
            part_asks=questions.words("part_asks"),
            part_asks_first=questions.words("part_asks_first"),
            whether_opens=questions.words("whether_opens"),
            whether_closes=questions.words("whether_closes"),
            whether_not_asked=frozenset(questions.words("whether_not_asked")),
            whether_verbs=frozenset(questions.words("whether_verbs")),
            per_marks=per.words("marks"),
            per_not_followed_by=per.words("not_followed_by"),
            per_periods=_periods(per.part("periods")),
        ),
        small_talk=SmallTalkWords(
            padding=small_talk.words("padding"),
            kinds=_phrase_kinds(small_talk),
            leading=small_talk.patterns("leading"),
            after_leading=small_talk.words("after_leading"),
            human=small_talk.patterns("human"),
            asking=small_talk.patterns("asking"),
            about_staff=small_talk.words("about_staff"),
        ),
        follow_up=FollowUpWords(
            starts=follow_up.words("starts"),
            not_starts=follow_up.words("not_starts"),
            ends=follow_up.words("ends"),
            max_words=follow_up.count("max_words"),
            max_elliptical_words=follow_up.count("max_elliptical_words"),
            reference_nouns=reference.categories("nouns", names),
            reference_any=reference.words("any_nouns"),
            reference_determiners=reference.words("determiners"),
            reference_pronouns=reference.words("pronouns"),
            subjects=follow_up.category_list("subjects", names),
            carried=follow_up.category_list("carried", names),
            of_the_school=frozenset(follow_up.words("of_the_school")),
            not_a_topic=frozenset(follow_up.category_list("not_a_topic", names)),
            not_own=frozenset(follow_up.words("not_own")),
        ),
        listing=ListingWords(
            asks=listing.patterns("asks"),
            listed=listing.categories("listed", names),
            steps=listing.patterns("steps"),
        ),
        facts=_facts_words(facts, guard),
        guard=MappingProxyType(guard),
    )
    for section in (questions, per, small_talk, follow_up, reference, listing, facts):
        section.check_all_read()
    return pack


def _facts_words(section: _Section, guard: Mapping[str, Any]) -> FactsWords:
    categories = guard["categories"]
    methods = section.folded_map("column_methods")
    known = {str(v) for v in (categories.get("method") or {}).get("values") or {}}
    unknown = sorted(set(methods.values()) - known)
    if unknown:
        raise ConfigError(f"{section.where}: `column_methods`: {unknown} are not guard methods")
    attributes = section.folded_map("attributes")
    wrong = sorted(set(attributes.values()) - _VALUE_KINDS)
    if wrong:
        raise ConfigError(
            f"{section.where}: `attributes`: {wrong} are not kinds of value {sorted(_VALUE_KINDS)}"
        )
    return FactsWords(
        name_columns=section.words("name_columns"),
        code_columns=section.words("code_columns"),
        combination_columns=section.words("combination_columns"),
        column_methods=methods,
        attributes=attributes,
        periods=section.folded_map("periods"),
        not_offered=section.strings("not_offered"),
        standard_programme=section.words("standard_programme"),
        standard_asked=section.words("standard_asked"),
        score_check=section.patterns("score_check"),
        offer=section.patterns("offer"),
        offer_programme=section.patterns("offer_programme"),
        asks_whether=section.patterns("asks_whether"),
        highest=section.words("highest"),
        lowest=section.words("lowest"),
        more=section.words("more"),
        less=section.words("less"),
        this_year=section.words("this_year"),
        last_year=section.words("last_year"),
        every_major=frozenset(section.words("every_major")),
        points=frozenset(section.words("points")),
        not_a_name=frozenset(section.words("not_a_name")),
    )


def _periods(section: _Section) -> Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    out = {}
    for name in section.raw:
        period = section.part(str(name))
        out[str(name)] = (period.words("asked"), period.strings("named"))
        period.check_all_read()
    return MappingProxyType(out)


def _phrase_kinds(section: _Section) -> tuple[tuple[PhraseKind, tuple[str, ...]], ...]:
    kinds = section.part("kinds")
    found = tuple(k for k in kinds.raw if _is_phrase_kind(k))
    if set(found) != set(_PHRASE_KINDS) or len(found) != len(kinds.raw):
        raise ConfigError(
            f"{kinds.where}: expected the kinds {list(_PHRASE_KINDS)}, found {list(kinds.raw)}"
        )
    return tuple((kind, kinds.patterns(kind)) for kind in found)


def _is_phrase_kind(name: object) -> TypeGuard[PhraseKind]:
    return name in _PHRASE_KINDS


class _Section:
    """One mapping of the pack, read key by key; each reader's error says ``where`` (the file and
    the section) and the key."""

    def __init__(self, where: str, raw: object) -> None:
        self.where = where
        if not isinstance(raw, Mapping) or not raw:
            raise ConfigError(f"{self.where} must be a non-empty mapping")
        self.raw: dict[str, Any] = {str(k): v for k, v in raw.items()}
        self._read: set[str] = set()

    def _get(self, key: str) -> Any:
        if key not in self.raw:
            raise ConfigError(f"{self.where}: missing key `{key}`")
        self._read.add(key)
        return self.raw[key]

    def check_all_read(self) -> None:
        """A key no rule reads is a typo or a leftover: refused, not ignored."""
        unread = sorted(set(self.raw) - self._read)
        if unread:
            raise ConfigError(f"{self.where}: unknown keys {unread}")

    def part(self, key: str) -> _Section:
        return _Section(f"{self.where}, key `{key}`", self._get(key))

    def strings(self, key: str) -> tuple[str, ...]:
        items = self._get(key)
        if not isinstance(items, list) or not items:
            raise ConfigError(f"{self.where}: `{key}` must be a non-empty list")
        for n, item in enumerate(items):
            if not isinstance(item, str) or not item.strip():
                raise ConfigError(f"{self.where}: `{key}`[{n}] must be a non-empty string")
        return tuple(items)

    def words(self, key: str) -> tuple[str, ...]:
        items = self.strings(key)
        for n, item in enumerate(items):
            if not _FOLDED.fullmatch(item):
                raise ConfigError(
                    f"{self.where}: `{key}`[{n}] {item!r} is not folded words (no diacritics, "
                    "lower case, one space between words)"
                )
        return items

    def patterns(self, key: str, slot: str = "") -> tuple[str, ...]:
        items = self.strings(key)
        for n, item in enumerate(items):
            try:
                re.compile(item.replace(slot, "") if slot else item)
            except re.error as exc:
                raise ConfigError(
                    f"{self.where}: `{key}`[{n}] {item!r} is not a regular expression: {exc}"
                ) from exc
        return items

    def count(self, key: str) -> int:
        value = self._get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"{self.where}: `{key}` must be a whole number of at least 1")
        return value

    def folded_map(self, key: str) -> Mapping[str, str]:
        """A mapping of folded words to a non-empty text, in the file's order."""
        raw = self._get(key)
        if not isinstance(raw, Mapping) or not raw:
            raise ConfigError(f"{self.where}: `{key}` must be a non-empty mapping")
        for word, value in raw.items():
            if not isinstance(word, str) or not _FOLDED.fullmatch(word):
                raise ConfigError(f"{self.where}: `{key}`: {word!r} is not folded words")
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{self.where}: `{key}`.{word} must be a non-empty string")
        return MappingProxyType(dict(raw))

    def category_list(self, key: str, categories: frozenset[str]) -> tuple[str, ...]:
        items = self.strings(key)
        _check_categories(f"{self.where}: `{key}`", items, categories)
        return items

    def categories(self, key: str, categories: frozenset[str]) -> Mapping[str, str]:
        """A mapping of folded nouns to guard categories, in the file's order."""
        raw = self._get(key)
        if not isinstance(raw, Mapping) or not raw:
            raise ConfigError(f"{self.where}: `{key}` must map folded nouns to guard categories")
        for noun, category in raw.items():
            if not isinstance(noun, str) or not _FOLDED.fullmatch(noun):
                raise ConfigError(f"{self.where}: `{key}`: {noun!r} is not folded words")
            if not isinstance(category, str):
                raise ConfigError(f"{self.where}: `{key}`.{noun} must name a guard category")
        _check_categories(f"{self.where}: `{key}`", tuple(raw.values()), categories)
        return MappingProxyType(dict(raw))


def _check_categories(where: str, names: tuple[str, ...], categories: frozenset[str]) -> None:
    unknown = sorted(set(names) - categories)
    if unknown:
        raise ConfigError(f"{where}: {unknown} are not categories of the guard section")
