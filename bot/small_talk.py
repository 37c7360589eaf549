"""Messages that ask nothing to search for (3/6): a greeting, a thank-you, a goodbye, or a
request to talk to a person. Read without an LLM, on the folded words; with an LLM the query
plan reads them too (bot.query_plan).

A message is small talk only when nothing else is left in it: "xin chào ạ" is a greeting,
"chào ad, học phí bao nhiêu?" is a question (the greeting is a filler the question splitter
drops, retrieval.query). A request for a person is read wherever it stands ("e muốn nói chuyện
với người thật được ko ạ"): the reply gives the admissions office's contact, and the message
stays in the conversation for staff.
"""

from __future__ import annotations

import re
from typing import Literal

from retrieval.text import fold

Kind = Literal["greeting", "thanks", "goodbye", "human"]

# Words that carry nothing else: particles, vocatives, pronouns, "ok".
# Folded, like the text they are matched against.
_PADDING = (
    r"(?:a|ak|ah|ha|nha|nhe|nhi|ne|oi|ad|admin|anh|chi|anh chi|ban|cac ban|mn|moi nguoi|"
    r"thay|co|thay co|em|e|minh|mk|to|toi|tui|con|da|vang|ok|oke|okay|vay|v|z|nhieu|lam|"
    r"rat|very|much|so|a lot|you|everyone|all|there|luon|roi|r)"
)
_WORDS: tuple[tuple[Kind, str], ...] = (
    ("greeting", r"xin chao|chao|hello|hi|hey|alo|good (?:morning|afternoon|evening)"),
    ("thanks", r"cam on|cam on nhieu|thanks?|thank you|thanks a lot|tks|thank|camon|cmon"),
    ("goodbye", r"tam biet|bye|goodbye|bai bai|bye bye|hen gap lai|see you"),
)
_KINDS = tuple(
    (kind, re.compile(rf"^(?:{_PADDING}\s+)*(?:{words})(?:\s+{_PADDING})*$"))
    for kind, words in _WORDS
)
# Asking for a person, anywhere in the message.
_HUMAN = re.compile(
    r"\b(?:nguoi that|nguoi tu van|can bo(?: tu van| tuyen sinh)?|tu van vien|nhan vien|"
    r"gap (?:truc tiep|nguoi)|noi chuyen (?:voi|truc tiep)|gap ad|a (?:real )?person|"
    r"(?:talk|speak|chat) (?:to|with) (?:a )?(?:human|person|someone|staff|an agent|an advisor)|"
    r"real person|human agent)\b"
)
# A request is a request only when the message asks for it, not when it names staff in passing
# ("cán bộ tư vấn trả lời khi nào" is a question): a verb of wanting or meeting goes with it.
_ASKING = re.compile(
    r"\b(?:muon|cho (?:em|minh|toi|to) (?:gap|noi|duoc|ket)|xin (?:gap|noi|ket)|gap|noi chuyen|"
    r"ket noi|want|can i|could i|let me|please|talk|speak|chat)\b"
)


def small_talk(text: str) -> Kind | None:
    """The kind of small talk ``text`` is, or None for anything with something to search."""
    words = " ".join(re.findall(r"[a-z0-9]+", fold(text)))
    if not words:
        return None
    if _HUMAN.search(words) and _ASKING.search(words):
        return "human"
    for kind, pattern in _KINDS:
        if pattern.match(words):
            return kind
    return None
