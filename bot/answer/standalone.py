"""What a message names by itself (1/4): the conversation step (bot.answer.followup) reads a
message alone first, and looks back only when this says it lacks something.

A message names an attribute ("học phí"), a subject (a major, a programme, a school), a
qualifier (a method, a campus, a year), words of its own no category reads ("năm nhất"), and
maybe a follow-up's mark ("còn …", "… thì sao", "ngành đó"). Those are the context scorer's
features (retrieval/data/decisions.json, "context"), and, without a fitted scorer, the rule of
``stands_alone``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.answer.reading import Reading, read_question
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Span
from retrieval.query import asks_something
from retrieval.text.folding import fold, strip_marks
from retrieval.text.pack import load_pack
from retrieval.text.terms import CLOSING_PARTICLES, TextProcessor

# The marks of a follow-up and the categories it takes, from the language pack (follow_up):
# folded, so "còn"/"con" and "thì sao"/"thi sao" are one marker each. A start is a whole word
# ("con " and not "cong"), an end too (" thi sao").
_WORDS = load_pack().follow_up
_STARTS = tuple(f"{w} " for w in _WORDS.starts)
_NOT_STARTS = _WORDS.not_starts
_ENDS = tuple(f" {w}" for w in _WORDS.ends)
MAX_FOLLOW_UP_WORDS = _WORDS.max_words
MAX_ELLIPTICAL_WORDS = _WORDS.max_elliptical_words  # longer messages stand alone

# "ngành đó", "trường này": a reference to the value of that category in the previous question;
# "bên đó", "chỗ đó", "của nó": to its subject, whatever its category (``ANY_SUBJECT``).
ANY_SUBJECT = "any"
REFERENCE = re.compile(
    rf"\b(?P<noun>{'|'.join([*_WORDS.reference_nouns, *_WORDS.reference_any])})"
    rf"(?: hoc)? (?P<det>{'|'.join(_WORDS.reference_determiners)})\b"
    rf"|\b(?P<pronoun>{'|'.join(_WORDS.reference_pronouns)})\b"
)
REFERRED = {**_WORDS.reference_nouns, **dict.fromkeys(_WORDS.reference_any, ANY_SUBJECT)}


def reference_in(folded: str) -> tuple[str, re.Match[str], int] | None:
    """The reference in ``folded`` (a folded text): the category it points back to, its
    match, and how many of its words stay when the value is put in ("ngành đó" → "ngành
    ktpm": the noun; "của nó" → "của ktpm": all but the pronoun)."""
    match = REFERENCE.search(folded)
    if match is None:
        return None
    if match.group("pronoun") is not None:
        return ANY_SUBJECT, match, len(match.group("pronoun").split()) - 1
    return REFERRED[match.group("noun")], match, len(match.group("noun").split())


# What a question is about (its subject), as the guard's categories read it.
SUBJECTS = _WORDS.subjects
NOT_A_TOPIC = _WORDS.not_a_topic
_NOT_OWN = _WORDS.not_own
_QUESTION = frozenset(load_pack().questions.anywhere)  # "ở đâu", "khi nào", "bao nhiêu"…
# Question words of a message's own: not a follow-up's "… thì sao".
_OWN_QUESTION = _QUESTION - frozenset(_WORDS.ends)
# Words of the asking, not of what is asked: a follow-up's opening mark ("thế còn …") and "thì"
# before a question word ("vậy cả năm thì bao nhiêu"; folded, "thi" is also an exam).
_ASKED_AFTER = sorted({*_QUESTION, *load_pack().questions.at_end, "sao"}, key=len, reverse=True)
_ASKING = re.compile(
    rf"^\s*(?:{'|'.join(sorted(_WORDS.starts, key=len, reverse=True))})\b"
    rf"|\bthi(?= (?:{'|'.join(_ASKED_AFTER)})\b)"
)

# The context scorer's features: more of each is likelier a follow-up (``UP``) or not.
CONTEXT_FEATURES = ("lacks_attribute", "lacks_subject", "marked", "own_words", "words")
CONTEXT_UP = ("lacks_attribute", "lacks_subject", "marked")


@dataclass(frozen=True)
class Alone:
    """What a message names by itself."""

    attribute: bool
    subject: bool
    qualifier: bool  # a method, a campus, a year…
    own_words: int  # content words no category reads ("năm nhất", "xác nhận nhập học")
    words: int
    marked: bool  # "còn …", "… thì sao", "ngành đó"
    asks: bool = False  # a question of its own: "có … không", "… nào", "bao nhiêu"
    own: tuple[str, ...] = ()  # its own words, as keyword terms
    # The guard's reading of the message as typed (the values it names, the words that say
    # them) and with its shorthand written out (what it names by itself).
    typed: Reading = field(default_factory=Reading, compare=False)
    written: Reading = field(default_factory=Reading, compare=False)

    @property
    def features(self) -> tuple[float, ...]:
        return (
            float(not self.attribute),
            float(not self.subject and not self.own_words),
            float(self.marked),
            float(min(self.own_words, 5)),
            float(min(self.words, 20)) / 20.0,
        )


def own_terms(expanded: str, guard: NearMissGuard, processor: TextProcessor) -> list[str]:
    """The message's content words no category of the guard reads ("năm nhất", "nuôi mèo"),
    as keyword terms (``expanded``: the message with its shorthand written out)."""
    unread = guard.unread(_without_asking(expanded))
    return [
        t
        for t in processor.query_terms(unread)
        if "_" not in t and not t.isdigit() and t not in _NOT_OWN
    ]


def _without_asking(text: str) -> str:
    """``text`` less the words of the asking (``_ASKING``), found folded, taken out as written
    (NFC Vietnamese folds one character to one)."""
    text = unicodedata.normalize("NFC", text)
    folded = strip_marks(text)
    if len(folded) != len(text):
        return _ASKING.sub(" ", folded)
    kept, last = [], 0
    for match in _ASKING.finditer(folded):
        kept.append(text[last : match.start()])
        last = match.end()
    return " ".join([*kept, text[last:]])


def read_alone(text: str, guard: NearMissGuard, processor: TextProcessor) -> Alone:
    expanded = processor.expand_query(text)
    written = read_question(expanded, guard, processor)
    facets = written.facets
    own = own_terms(expanded, guard, processor)
    return Alone(
        attribute="attribute" in facets,
        subject=any(c in facets for c in SUBJECTS),
        qualifier=bool(set(facets) - {"attribute", *SUBJECTS, *NOT_A_TOPIC}),
        own_words=len(own),
        words=len(text.split()),
        marked=looks_like_follow_up(text) or referred_category(text) is not None,
        asks=asks_something(text),
        own=tuple(own),
        typed=read_question(text, guard, processor),
        written=written,
    )


def stands_alone(mine: Alone) -> bool:
    """The rule without a fitted scorer: a long message, one that names what it asks and about
    what (its own words count as a subject: "năm nhất thì học ở cơ sở nào"), or a subject with
    words of its own ("hb tài năng cần bao nhiêu điểm thi") stands alone."""
    if mine.words > MAX_ELLIPTICAL_WORDS:
        return True
    if mine.attribute and (mine.subject or mine.own_words):
        return True
    # A subject and a question of its own ("ngành ttnt có xét học bạ không"), or words of its
    # own besides ("hb tài năng cần bao nhiêu điểm thi").
    return mine.subject and (mine.asks or mine.own_words >= 2)


def _folded(text: str) -> str:
    return re.sub(r"[?!.…,]+", " ", fold(text)).strip()


def asks_in_own_words(text: str) -> bool:
    """Whether ``text`` has a question word of its own ("lúc nào", "bao nhiêu"), not only a
    follow-up's "… thì sao"."""
    padded = f" {_folded(text)} "
    return any(f" {w} " in padded for w in _OWN_QUESTION)


def looks_like_follow_up(question: str) -> bool:
    """A short message marked as a follow-up ("còn ktpm thì sao", "ngành đó …"), or a longer one
    whose first clause ends as one ("Thế còn chương trình clc ngành KHMT thì sao ad, mắc hơn
    nhiều không?": the rest asks more of the same; "and if I choose 2+2, what IELTS …" asks
    its own)."""
    first = _CLAUSE_END.split(question.strip(), maxsplit=1)[0]
    return _marked(question) or (first.strip() != question.strip() and _marked(first, ends=True))


_CLAUSE_END = re.compile(r"[,;?!]+\s")
_CLOSING = CLOSING_PARTICLES | {"v", "z", "vay"}  # and "vậy" in chat


def _marked(question: str, *, ends: bool = False) -> bool:
    folded = _folded(question)
    if not folded or len(folded.split()) > MAX_FOLLOW_UP_WORDS:
        return False
    padded = f" {folded} "
    if folded.startswith(_NOT_STARTS):
        return False
    if not ends:
        return any(padded.startswith(" " + m) for m in _STARTS) or any(
            padded.rstrip().endswith(m) for m in _ENDS
        )
    words = folded.split()
    while words and words[-1] in _CLOSING:  # "… thì sao ad"
        words.pop()
    return any(f" {' '.join(words)}".endswith(m) for m in _ENDS)


# "ngành nào tuyển đông nhất", "which programme is taught in English": the question asks for a
# subject itself, and lacks none to take from an earlier question.
_WHICH_SUBJECT = re.compile(
    rf"\b(?:{'|'.join(n for n, c in _WORDS.reference_nouns.items() if c in SUBJECTS)})"
    r"(?: hoc)? (?:nao|gi)\b"
    r"|\bwhich (?:major|programme|program|degree|school|scholarship)s?\b"
)


def asks_for_a_subject(text: str) -> bool:
    """Whether ``text`` asks which major, programme, school… (the subject is what it asks)."""
    return bool(_WHICH_SUBJECT.search(_folded(text)))


def referred_category(text: str) -> str | None:
    """The guard category a reference in ``text`` points back to ("ngành đó": major;
    ``ANY_SUBJECT`` for "bên đó"), or None."""
    found = reference_in(fold(text))
    return found[0] if found is not None else None


def topic_of(text: str, guard: NearMissGuard, processor: TextProcessor) -> str:
    """What ``text`` is about: its words less those asking for a kind of value ("sđt", "bao
    nhiêu tiền", "ở đâu"), less a count with the words on either side ("phòng 4 người", "1
    tháng": the previous question asked about a kind of room, not what a follow-up is about),
    unless the guard reads them as a value ("cơ sở 2", "năm 2026", "học phí"), and less the
    question words and particles at its ends ("là gì ạ")."""
    raw = text.split()
    spans = guard.spans(text)
    named = _words_in(text, [s for s in spans if s.category != "number"])
    # A value read from question words alone ("ở đâu": a place asked), not "học phí".
    asking = _words_in(text, [s for s in spans if fold(text[s.start : s.end]) in _QUESTION])
    counts = {
        j
        for i, w in enumerate(raw)
        if i not in named and w.strip("?!.,").isdigit()
        for j in (i - 1, i, i + 1)
        if j not in named
    }
    words = [
        w.strip("?!.,")
        for i, w in enumerate(raw)
        if i not in counts | asking and not guard.asked_kinds(w)
    ]
    words = [w for w in words if w]
    while words and not processor.query_terms(words[0]):
        words.pop(0)
    while words and not processor.query_terms(words[-1]):
        words.pop()
    return " ".join(words)


def _words_in(text: str, spans: Sequence[Span]) -> set[int]:
    """The positions of ``text.split()`` inside one of ``spans``."""
    out: set[int] = set()
    at = 0
    for i, word in enumerate(text.split()):
        start = text.index(word, at)
        at = start + len(word)
        if any(start < s.end and at > s.start for s in spans):
            out.add(i)
    return out
