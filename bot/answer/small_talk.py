"""Messages that ask nothing to search for (3/6): a greeting, a thank-you, a goodbye, an opener,
or a request to talk to a person. Read without an LLM, on the folded words; with an LLM the
query plan reads them too (bot.answer.query_plan).

A message is small talk only when nothing else is left in it: "xin chào ạ" is a greeting,
"chào ad, học phí bao nhiêu?" is a question (the greeting is a filler the question splitter
drops, retrieval.query). A request for a person is read wherever it stands ("e muốn nói chuyện
với người thật được ko ạ"): the reply gives the admissions office's contact, and the message
stays in the conversation for staff.

An opener (4/4) calls the one who answers or asks leave to ask ("ad ơi", "cho e hỏi", "hello,
can I ask something?"): it is answered with a short invitation, and the message after it is
read alone (bot.answer.followup). In front of a question an opener is no part of it: "ad ơi hp
cntt bn" asks "hp cntt bn", and is searched as if asked alone.

A message is read once, when it comes in (bot.answer.read.read_message, with ``small_talk`` and
``without_opener``); the conversation step and the answerer take that reading instead of
reading the message again.
"""

from __future__ import annotations

import re
from typing import Literal

from bot.answer.question import is_question
from retrieval.text.folding import fold
from retrieval.text.pack import alternatives, load_pack

Kind = Literal["greeting", "thanks", "goodbye", "opener", "human"]

# Small talk is short. A longer message is a question whatever it opens with, and the patterns
# below (padding words overlap: "anh chi" is "anh" and "chi") would backtrack for ever on a long
# run of padding.
MAX_WORDS = 16

# The phrases, from the language pack (small_talk), matched against the folded words.
_WORDS = load_pack().small_talk
_PHRASES = dict(_WORDS.kinds)
_PADDING = alternatives(_WORDS.padding)
# An opener holds a call or a leave to ask, with greetings and thanks around it ("chào ad, cảm
# ơn ad, cho em hỏi thêm"): nothing asked yet.
_OPENS = (*_WORDS.leading, *_PHRASES["opener"])
_AROUND_OPENER = (*_WORDS.padding, *_PHRASES["greeting"], *_PHRASES["thanks"], *_OPENS)


def _kind_pattern(phrases: tuple[str, ...], around: tuple[str, ...]) -> re.Pattern[str]:
    """A kind's phrase with nothing but ``around`` (padding, more of its phrases) beside it."""
    words = alternatives(around)
    return re.compile(rf"^(?:{words}\s+)*{alternatives(phrases)}(?:\s+{words})*$")


_KINDS = tuple(
    (
        kind,
        _kind_pattern(_OPENS, _AROUND_OPENER)
        if kind == "opener"
        else _kind_pattern(phrases, (*_WORDS.padding, *phrases)),
    )
    for kind, phrases in _WORDS.kinds
)
# Asking for a person, anywhere in the message...
_HUMAN = re.compile(rf"\b{alternatives(_WORDS.human)}\b")
# ...is a request only when the message asks for it, not when it names staff in passing.
_ASKING = re.compile(rf"\b{alternatives(_WORDS.asking)}\b")
# ...nor when it asks something about them ("số điện thoại của nhân viên phòng KTX").
_ABOUT_STAFF = re.compile(rf"\b{alternatives(_WORDS.about_staff)}\b")

# An opener in front of a question, over the folded tokens of the message (their punctuation
# kept): a call or a leave to ask, or a greeting ("dạ em chào ad ạ,"), each with the words that
# go with it ("ạ", "là", the one called) and its punctuation.
_PIECE = re.compile(
    rf"(?:(?P<leading>{alternatives(_WORDS.leading)})"
    rf"|(?P<greeting>(?:{_PADDING}\s+)*{alternatives(_PHRASES['greeting'])}))"
    rf"(?P<after>(?:\s+{alternatives(_WORDS.after_leading)})*)"
    r"(?P<mark>(?:\s*[^\w\s]+)*)(?=\s|$)"
)


def small_talk(text: str) -> Kind | None:
    """The kind of small talk ``text`` is, or None for anything with something to search."""
    words = " ".join(re.findall(r"[a-z0-9]+", fold(text)))
    if not words:
        return None
    if _HUMAN.search(words) and _ASKING.search(words) and not _ABOUT_STAFF.search(words):
        return "human"
    if len(words.split()) > MAX_WORDS:
        return None
    for kind, pattern in _KINDS:
        if pattern.match(words):
            return kind
    return None


def without_opener(question: str) -> str:
    """``question`` less the opener in front of it ("ad ơi, cho e hỏi hp cntt bn" → "hp cntt
    bn"); as it is when it opens with none, or when nothing would be left.

    A call or a leave to ask is taken off wherever it stands first; a greeting only when
    something marks its end (a comma, the one greeted, another opener): "chào mừng tân sinh
    viên…" opens with no greeting."""
    tokens = question.split()
    folded = [fold(t) for t in tokens[:MAX_WORDS]]
    if not all(folded) or any(" " in f for f in folded):
        return question
    text = " ".join(folded)
    position = cut = 0
    while (piece := _PIECE.match(text, position)) is not None:
        ends = bool(piece["leading"] or piece["after"] or piece["mark"])
        if not ends and _PIECE.match(text, piece.end() + 1) is None:
            break
        cut, position = piece.end(), piece.end() + 1
    rest = " ".join(tokens[len(text[:cut].split()) :])
    return rest if cut and is_question(rest) else question
