"""The one sentence splitter of passages, and the line and abbreviation rules it needs.

`split_sentences` cuts document text (chunking, the semantic chunker's pieces). A student's
question is cut by `retrieval.query` instead: chat is typed in lower case, so a question's
sentences cannot be told by a capital letter after the full stop.
"""

from __future__ import annotations

import re

LIST_ITEM = re.compile(r"^\s*([-+*•·–]\s|\d+(\.\d+)*[.)]\s|[a-zđ][.)]\s|[IVXLC]+[./]\s)")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_LIST_MARKER = re.compile(r"^\s*[(\[]?(\d+|[IVXLCDM]+|[A-Za-zĐđ])([.)]\d*)*[.)/]?$")
# Lower-cased words whose final dot is not a sentence end ("TP. Hồ Chí Minh", "ThS. Lê", "v.v.").
_ABBREVIATIONS = frozenset(
    {"tp", "q", "p", "h", "ths", "ts", "pgs", "gs", "bs", "ks", "ncs", "v.v", "st", "mr", "mrs"}
    | {"ms", "dr", "e.g", "i.e", "vs", "tel"}
)


# A full stop after one of these is an abbreviation, not the end of a sentence: "TP. Hồ Chí
# Minh", "ThS. Nguyễn", "PGS. TS.", "Tp.", "v.v.", an initial; and the usual ones as a student
# types them, lower-case ("ở tp. hcm", "ths. lê"). Not a longer word or acronym: "… Việt Nam."
# and "… của ĐHQG." end sentences.
_ABBREVIATED = re.compile(
    r"(?:^|[\s(.])(?:[A-ZĐ]{1,2}|[A-ZĐ][a-zđ]|[A-ZĐ][a-zđ]?[A-ZĐ]{1,2}|[a-zđ]|"
    r"(?i:tp|tx|ths|ts|pgs|gs|vd|nxb))\.$"
)


# "1.050.000 đ." ends a sentence: "đ" after an amount is the currency, not an initial.
_CURRENCY_END = re.compile(r"\d\s*đ\.$")


def ends_with_abbreviation(text: str) -> bool:
    """Whether ``text`` ends with an abbreviation's full stop ("… Quốc gia TP."), so that a
    sentence splitter should not cut after it."""
    return bool(_ABBREVIATED.search(text)) and not _CURRENCY_END.search(text)


def logical_lines(lines: list[str]) -> list[str]:
    """Lines with hard-wrapped continuations (as in PDF text) joined back to their line."""
    joined: list[str] = []
    for line in lines:
        previous = joined[-1] if joined else ""
        if (
            previous
            and line[:1].islower()
            and not LIST_ITEM.match(line)
            and not previous.rstrip().endswith((".", "!", "?", ":", ";", "…"))
        ):
            joined[-1] = f"{previous.rstrip()} {line.strip()}"
        else:
            joined.append(line)
    return joined


def split_sentences(text: str) -> list[str]:
    """Split at . ! ? … followed by a space - never inside 28.5, 40.000.000 or 15/6/2026, nor
    after an abbreviation ("TP. Hồ Chí Minh"), a list marker ("1.") or before a lower-case word."""
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        after = text[match.end() :].lstrip()
        if not after or after[0].islower():
            continue
        head = text[start : match.start()]
        last_word = head.split()[-1].casefold() if head.split() else ""
        initial = len(last_word) == 1 and last_word.isalpha()
        initial = initial and not _CURRENCY_END.search(head + match.group()[:1])
        if initial or last_word in _ABBREVIATIONS or _LIST_MARKER.match(head + match.group()[:1]):
            continue
        sentence = text[start : match.end()].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences
