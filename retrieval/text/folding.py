"""Folding: text reduced to what a student without a Vietnamese keyboard types.

``fold`` is what keyword terms, FAQ keys and the evaluation compare on: no diacritics, đ as d,
× as x, lower case, one space between words.
"""

from __future__ import annotations

import re
import unicodedata

_WS = re.compile(r"\s+")


def fold(text: str) -> str:
    """NFD, combining marks dropped, đ → d, × → x, lower case, whitespace collapsed.

    The rules of ``norm()`` in the evaluation datasets' validate.py (and "×" as typed), so a
    folded answer can be compared with a folded key fact.
    """
    return _WS.sub(" ", strip_marks(text)).strip()


def strip_marks(text: str) -> str:
    """``fold`` without the whitespace step; fast for Latin text (indexing folds every chunk)."""
    if text.isascii():
        return text.lower()
    text = _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text))
    # "×" as a keyboard types it: "ảnh 3×4" is the student's "ảnh 3x4".
    text = text.replace("đ", "d").replace("Đ", "D").replace("×", "x")
    if not text.isascii():  # other scripts may carry other combining marks
        text = _NON_ASCII.sub(_drop_marks, text)
    return text.lower()


_LATIN_MARKS = re.compile("[\u0300-\u036f]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _drop_marks(match: re.Match[str]) -> str:
    return "".join(c for c in match.group(0) if unicodedata.category(c) != "Mn")


# -- language ----------------------------------------------------------------------------------


def word_set(*lines: str) -> frozenset[str]:
    """The words of some lines of a word list, as a set."""
    return frozenset(" ".join(lines).split())
