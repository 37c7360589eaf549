"""What comes in: a student's text made safe to read, and whether it asks anything."""

from __future__ import annotations

import re
import unicodedata

MAX_QUESTION_CHARS = 2000
_HAS_WORD = re.compile(r"\w", re.UNICODE)


def clean_question(raw: str) -> str:
    """Drop control characters (PostgreSQL rejects NUL), compose characters, cap the length.

    A 100 KB paste is cut to its first ``MAX_QUESTION_CHARS`` characters: a question is short,
    and embedding models read ~512 tokens anyway. Decomposed Vietnamese (some keyboards and
    copied PDFs send "ư" + "̛" + "̣") becomes NFC, the form the rest of the pipeline reads.
    """
    raw = unicodedata.normalize("NFC", raw)
    kept = "".join(ch if unicodedata.category(ch)[0] != "C" or ch in "\n\t" else " " for ch in raw)
    return " ".join(kept.split())[:MAX_QUESTION_CHARS].strip()


def is_question(text: str) -> bool:
    """Whether there is anything to search for: letters or digits, not only emoji/punctuation."""
    return bool(_HAS_WORD.search(text.replace("_", "")))
