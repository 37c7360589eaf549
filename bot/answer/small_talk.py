"""Messages that ask nothing to search for (3/6): a greeting, a thank-you, a goodbye, or a
request to talk to a person. Read without an LLM, on the folded words; with an LLM the query
plan reads them too (bot.answer.query_plan).

A message is small talk only when nothing else is left in it: "xin chào ạ" is a greeting,
"chào ad, học phí bao nhiêu?" is a question (the greeting is a filler the question splitter
drops, retrieval.query). A request for a person is read wherever it stands ("e muốn nói chuyện
với người thật được ko ạ"): the reply gives the admissions office's contact, and the message
stays in the conversation for staff.
"""

from __future__ import annotations

import re
from typing import Literal

from retrieval.text.folding import fold
from retrieval.text.pack import alternatives, load_pack

Kind = Literal["greeting", "thanks", "goodbye", "human"]

# The phrases, from the language pack (small_talk), matched against the folded words.
_WORDS = load_pack().small_talk
# A kind's phrase with nothing but padding (particles, vocatives, "ok") around it.
_PADDING = alternatives(_WORDS.padding)
_KINDS = tuple(
    (kind, re.compile(rf"^(?:{_PADDING}\s+)*{alternatives(phrases)}(?:\s+{_PADDING})*$"))
    for kind, phrases in _WORDS.kinds
)
# Asking for a person, anywhere in the message...
_HUMAN = re.compile(rf"\b{alternatives(_WORDS.human)}\b")
# ...is a request only when the message asks for it, not when it names staff in passing.
_ASKING = re.compile(rf"\b{alternatives(_WORDS.asking)}\b")
# ...nor when it asks something about them ("số điện thoại của nhân viên phòng KTX").
_ABOUT_STAFF = re.compile(rf"\b{alternatives(_WORDS.about_staff)}\b")


def small_talk(text: str) -> Kind | None:
    """The kind of small talk ``text`` is, or None for anything with something to search."""
    words = " ".join(re.findall(r"[a-z0-9]+", fold(text)))
    if not words:
        return None
    if _HUMAN.search(words) and _ASKING.search(words) and not _ABOUT_STAFF.search(words):
        return "human"
    for kind, pattern in _KINDS:
        if pattern.match(words):
            return kind
    return None
