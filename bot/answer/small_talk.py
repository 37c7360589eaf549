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

Kind = Literal["greeting", "thanks", "goodbye", "human"]

# Words that carry nothing else: particles, vocatives, pronouns, "ok".
# Folded, like the text they are matched against.
_PADDING = (
    r"(?:a|ak|ah|ha|nha|nhe|nhi|ne|oi|ad|admin|shop|anh|chi|anh chi|ban|cac ban|mn|moi nguoi|"
    r"thay|co|thay co|em|e|minh|mk|to|toi|tui|con|da|vang|ok|oke|okay|vay|v|z|nhieu|lam|thoi|"
    r"day|nay|rat|very|much|so|a lot|you|everyone|all|there|luon|roi|r|have a nice day|"
    r"have a good day|later|ya)"
)
_WORDS: tuple[tuple[Kind, str], ...] = (
    (
        "greeting",
        r"xin chao|chao|hello|helo|hi|hii|hey|alo|good (?:morning|afternoon|evening)|"
        r"chao buoi (?:sang|chieu|toi)",
    ),
    (
        "thanks",
        r"(?:cam on|camon|cmon|thanks?|thank you|thx|tks|many thanks)"
        r"(?: (?:anh chi|ad|admin|ban|shop|moi nguoi))?"
        r"(?: da (?:ho tro|giup do|giup|tu van|tra loi|giai dap)(?: (?:em|minh|to|toi|e))?)?",
    ),
    (
        "goodbye",
        r"tam biet|bye|goodbye|bai bai|bye bye|hen gap lai|see you|see ya|good night|"
        r"ngu ngon|pp|(?:xin phep )?off|out day|(?:xin phep )?(?:di|nghi) (?:day|nhe|nha)",
    ),
)
_KINDS = tuple(
    (kind, re.compile(rf"^(?:{_PADDING}\s+)*(?:{words})(?:\s+{_PADDING})*$"))
    for kind, words in _WORDS
)
# Asking for a person, anywhere in the message.
_HUMAN = re.compile(
    r"\b(?:nguoi that|nguoi tu van|can bo(?: tu van| tuyen sinh)?|tu van vien|nhan vien|"
    r"tu van truc tiep|gap (?:truc tiep )?(?:nguoi|can bo|nhan vien|tu van|ad)\b|gap truc tiep$|"
    r"noi chuyen (?:voi|truc tiep)|a (?:real )?person|real person|human agent|"
    r"(?:talk|speak|chat) (?:to|with) (?:a |an |the |your )?(?:human|person|someone|staff|agent|"
    r"advisor|adviser|counsell?or|officer|admissions officer))\b"
)
# A request is a request only when the message asks for it, not when it names staff in passing
# ("cán bộ tư vấn trả lời khi nào" is a question): a verb of wanting or meeting goes with it, or
# asks whether one is there ("có nhân viên nào online không").
_ASKING = re.compile(
    r"\b(?:muon|can (?:gap|nguoi|noi|tu van)|cho (?:em|minh|toi|to) (?:gap|noi|duoc|ket)|"
    r"xin (?:gap|noi|ket)|gap|noi chuyen|"
    r"ket noi|chuyen (?:sang|qua|cho)|online|truc tiep|want|like|can i|could i|let me|please|"
    r"(?:talk|speak|chat) (?:to|with))\b"
)
# Words that make a mention of staff a question about them, not a request ("số điện thoại của
# nhân viên phòng KTX", "nhân viên trường có hỗ trợ tìm nhà trọ không", "tư vấn trực tiếp ở
# đâu"): the documents answer those.
_ABOUT_STAFF = re.compile(
    r"\b(?:so dien thoai|sdt|email|ho tro tim|giang vien|lam viec|o dau|khi nao|may gio|bao gio|"
    r"the nao|where|when)\b"
)


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
