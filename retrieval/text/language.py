"""The one language guesser: is a question, a passage or a document Vietnamese or English."""

from __future__ import annotations

import re
import unicodedata

from bot.core.types import Language
from retrieval.text.folding import word_set

# A folded word of this shape could be a Vietnamese syllable: an optional initial, one to three
# vowels, an optional final. Most English words fail it (clusters, w/f/j/z, finals s/r/l/d...).
_VI_SYLLABLE = re.compile(
    r"(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?[aeiouy]{1,3}(?:ch|ng|nh|[cmnpt])?"
)


# Unaccented words that are common in admissions chat, including shorthand that is not syllable-
# shaped. Words that are also English (the/thế, can/cần, to/tổ, on/ơn, an/an toàn) are in neither
# list and count only by shape.
_VI_WORDS = word_set(
    "nganh hoc phi diem chuan xet tuyen truong nam bao nhieu cho em hoi khong duoc nao gi la cua",
    "nhung cac sinh vien dai cao dang ky chi tieu nop ho so han khi dau bang van lien thong ket",
    "qua bong toan dien tri tue nhan tao may tinh khoa thuat phan mem cong nghe tin quoc te chuong",
    "trinh tai nang dieu kien thoi gian ngay thang muon biet gium voi roi vay oi da thua xin chao",
    "cam trung nhap thi mot hai ba bon lam sao nhe nha minh ban thay ko dc bn mk mn ad ntn hb sv",
    "khmt ktmt cntt ktpm attt httt khdl ttnt tmdt dgnl thpt ktx clc vb",
)
_EN_WORDS = word_set(
    "the what which who whom how when where why is are was were does did much many for of with",
    "about from and or you your i please tell know want there have has this that these those it",
    "its in at by if as be been would could should will fee fees cost costs score scores tuition",
    "major majors program programs programme degree exam year years thanks thank hello apply",
    "deadline course courses student students university admission admissions scholarship english",
)
_LETTERS = re.compile(r"[^\W\d_]+")
# Latin letters with diacritics (precomposed or combining), as Vietnamese writes them.
_MARKED = re.compile(r"[\u00c0-\u00ff\u0100-\u01b0\u0300-\u036f\u1ea0-\u1ef9]")


def detect_language(text: str, *, unknown: Language = "vi") -> Language:
    """Whether a question, passage or document is Vietnamese or English; ``unknown`` without
    evidence either way (Vietnamese for a question; a document loader passes English).

    Words with Vietnamese diacritics, common unaccented Vietnamese words and chat shorthand count
    for Vietnamese; common English words and words that cannot be Vietnamese syllables count for
    English. Vietnamese evidence from a name (a capitalised word and the word after it) counts
    half: an English question may quote one ("the tuition at Trường Đại học Công nghệ ...").
    """
    vi = en = 0.0
    in_name = False
    text = unicodedata.normalize("NFC", text)
    for n, match in enumerate(_LETTERS.finditer(text)):
        if n >= 300:  # enough for a passage; keeps indexing linear in small steps
            break
        word = match.group(0)
        weight = 0.5 if in_name or word[0].isupper() else 1.0
        in_name = word[0].isupper()
        if not word.isascii():
            if _MARKED.search(word):
                vi += weight
            continue
        folded = word.lower()
        if folded in _EN_WORDS:
            en += 1.0
        elif folded in _VI_WORDS:
            vi += weight
        elif _VI_SYLLABLE.fullmatch(folded):
            vi += 0.5 * weight
        elif len(folded) >= 4:
            en += 0.5
    if not vi and en < 1.0:
        return unknown
    return "en" if en >= 1.0 and en > vi else "vi"


# -- tokens ------------------------------------------------------------------------------------
