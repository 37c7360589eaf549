"""How readable extracted text is: the score that decides between a PDF's text layer and OCR.

A layer can be there and still unreadable: an English-only OCR pass that strips the diacritics
and reads letters as digits ("C6ng tric sinh vi6n"), or text in a legacy 8-bit font encoding
(TCVN3 "c«ng t¸c sinh viªn", VNI "coâng taùc"). `text_quality` scores both low.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from retrieval.text.language import detect_language

_TONES = ("", "\u0300", "\u0301", "\u0309", "\u0303", "\u0323")
_VOWELS = "aăâeêioôơuưy"
_VI_LETTERS = frozenset(
    "abcdefghijklmnopqrstuvwxyzđ"
    + "".join(unicodedata.normalize("NFC", v + t) for v in _VOWELS for t in _TONES)
)
_TONE_MARKS = frozenset(_TONES[1:])
# A Vietnamese syllable with its tone mark removed: initial, vowel nucleus, final. The nuclei
# keep their circumflex, breve and horn, so VNI's "coâng" (công) and "veà" (về) fail: no nucleus
# has "â" after "o", or is "ea".
_NUCLEI = [
    "iêu",
    "yêu",
    "oai",
    "oay",
    "oeo",
    "uây",
    "uôi",
    "uya",
    "uyê",
    "uyu",
    "ươi",
    "ươu",
    "ai",
    "ao",
    "au",
    "ay",
    "âu",
    "ây",
    "eo",
    "êu",
    "ia",
    "iê",
    "iu",
    "oa",
    "oă",
    "oe",
    "oi",
    "ôi",
    "ơi",
    "ua",
    "uâ",
    "uê",
    "ui",
    "uô",
    "uơ",
    "uy",
    "ưa",
    "ưi",
    "ươ",
    "ưu",
    "yê",
    "a",
    "ă",
    "â",
    "e",
    "ê",
    "i",
    "o",
    "ô",
    "ơ",
    "u",
    "ư",
    "y",
]
_VI_SYLLABLE = re.compile(
    r"(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?"
    f"(?:{'|'.join(_NUCLEI)})"
    r"(?:ch|ng|nh|[cmnpt])?"
)
_EDGE_PUNCTUATION = "\"'()[]{}<>.,;:!?…“”‘’«»-–—*•"
# Codes and numbers are not words: "08/2022/TT-BGDĐT", "7480201", "A00", "297/TB-HV".
_CODE = re.compile(r"[0-9A-ZĐ]+(?:[-/.,:][0-9A-ZĐ]+)*")
# Lowercase units and times after a number: "15h30", "8h", "2km", "10%".
_UNIT = re.compile(r"\d+(?:h\d*|g|km|m|cm|kg|ph|tr|st|nd|rd|th)")
_JOINERS = frozenset("-/.'’")
_MIN_WORDS_FOR_MARKS = 8
# Vietnamese prose carries a mark on most syllables (~70 % in the corpus); an English-only OCR
# pass keeps almost none. Below this share the text reads as Vietnamese stripped of its marks.
_EXPECTED_MARKED_SHARE = 0.3


def _is_clean_word(word: str) -> bool:
    """A word spelt with the Vietnamese alphabet (English included), shaped like a syllable if
    it carries Vietnamese marks, with no digit or symbol inside and no capital after a small
    letter - the traces of English OCR ("vi6n"), TCVN3 ("vÒ", "c«ng") or VNI ("ñeán")."""
    lower = word.lower()
    if any(ch not in _VI_LETTERS and ch not in _JOINERS for ch in lower):
        return False
    if any(a.islower() and b.isupper() for a, b in itertools.pairwise(word)):
        return False
    if lower.isascii():
        return True
    decomposed = unicodedata.normalize("NFD", lower)
    if sum(ch in _TONE_MARKS for ch in decomposed) > 1:
        return False
    toneless = unicodedata.normalize(
        "NFC", "".join(ch for ch in decomposed if ch not in _TONE_MARKS)
    ).replace("đ", "d")
    return all(_VI_SYLLABLE.fullmatch(part) for part in re.split(r"[-/.'’]+", toneless) if part)


def text_quality(text: str) -> float:
    """How readable extracted text is, from 0 (nothing readable) to 1 (clean prose).

    The score is the share of word tokens (whitespace-separated, edge punctuation stripped,
    holding a letter; codes such as "08/2022/TT-BGDĐT" and numbers with units are left out) that
    are clean words (see `_is_clean_word`). When the text reads as Vietnamese (by
    `retrieval.text.language.detect_language`) and has at least 8 words, it is multiplied by
    0.5 + 0.5 * min(1, marked share / 0.3): Vietnamese with (almost) no diacritics is an
    English-only OCR layer even where each word is spelt plausibly ("tric sinh dinh").

    Samples: clean Vietnamese ~1.0; "C6ng tric sinh vi6n Didu 1 Quyh dinh si5" ~0.3;
    TCVN3 "Quy ®Þnh vÒ c«ng t¸c sinh viªn" ~0.15.
    """
    words: list[str] = []
    for token in text.split():
        token = token.strip(_EDGE_PUNCTUATION)
        if not any(ch.isalpha() for ch in token):
            continue
        if _CODE.fullmatch(token) and (not token.isalpha() or len(token) <= 1):
            continue
        if _UNIT.fullmatch(token):
            continue
        words.append(unicodedata.normalize("NFC", token))
    if not words:
        return 0.0
    clean = sum(_is_clean_word(word) for word in words)
    score = clean / len(words)
    if len(words) >= _MIN_WORDS_FOR_MARKS and detect_language(" ".join(words)) == "vi":
        marked = sum(not word.isascii() for word in words) / len(words)
        score *= 0.5 + 0.5 * min(1.0, marked / _EXPECTED_MARKED_SHARE)
    return round(score, 3)


# --- OCR -----------------------------------------------------------------------------------------
