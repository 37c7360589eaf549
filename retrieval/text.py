"""Text processing for search: folding, language detection, keyword terms and query rewriting.

Students type without diacritics and in chat shorthand ("hoc phi nganh khmt bn v ad"); documents
are written in full ("Học phí ngành Khoa học Máy tính"). Keyword search reduces both sides to the
same terms:

- every word, folded (no diacritics, lower case): ``hoc phi nganh khoa hoc may tinh``;
- every pair of neighbouring words in a clause, joined by ``_``: ``hoc_phi khoa_hoc may_tinh``.
  Most Vietnamese compounds have two syllables, and pairs need no word segmentation, so a question
  typed without accents (which a segmenter cannot split) still meets the document's compounds;
- abbreviations expanded in place, the abbreviation itself kept as a term too.

Why pairs and not a word segmenter (underthesea): with BM25 over the UIT set (72 answerable
questions, 196 chunks of ~900 characters, Hit@1 by source file) syllables alone give 0.65,
syllables + pairs 0.78, syllables + underthesea compounds 0.68, and pairs + underthesea compounds
of three or more syllables 0.79 while indexing 20x slower. This module scores 0.79 (Hit@3 0.93,
MRR@10 0.86) at about 2,500 chunks of 1,000 characters per second.

In PostgreSQL the ``simple`` parser splits ``hoc_phi`` into ``hoc`` and ``phi``: in a tsvector a
pair adds only positions, and in ``to_tsquery`` it becomes the phrase ``'hoc' <-> 'phi'``, which is
what a compound should match. BM25 (retrieval.bm25) keeps each pair as one term.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import yaml

from bot.core.errors import ConfigError
from bot.core.types import Language

if TYPE_CHECKING:
    from bot.core.settings import TextSettings

DATA_DIR = Path(__file__).parent / "data"

_WS = re.compile(r"\s+")


def fold(text: str) -> str:
    """NFD, combining marks dropped, đ → d, lower case, whitespace collapsed.

    The same rules as ``norm()`` in the evaluation datasets' validate.py, so a folded answer can be
    compared with a folded key fact.
    """
    return _WS.sub(" ", _strip_marks(text)).strip()


def _strip_marks(text: str) -> str:
    """``fold`` without the whitespace step; fast for Latin text (indexing folds every chunk)."""
    if text.isascii():
        return text.lower()
    text = _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text))
    text = text.replace("đ", "d").replace("Đ", "D")
    if not text.isascii():  # other scripts may carry other combining marks
        text = _NON_ASCII.sub(_drop_marks, text)
    return text.lower()


_LATIN_MARKS = re.compile("[\u0300-\u036f]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _drop_marks(match: re.Match[str]) -> str:
    return "".join(c for c in match.group(0) if unicodedata.category(c) != "Mn")


# -- language ----------------------------------------------------------------------------------

# A folded word of this shape could be a Vietnamese syllable: an optional initial, one to three
# vowels, an optional final. Most English words fail it (clusters, w/f/j/z, finals s/r/l/d...).
_VI_SYLLABLE = re.compile(
    r"(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?[aeiouy]{1,3}(?:ch|ng|nh|[cmnpt])?"
)


def _words(*lines: str) -> frozenset[str]:
    return frozenset(" ".join(lines).split())


# Unaccented words that are common in admissions chat, including shorthand that is not syllable-
# shaped. Words that are also English (the/thế, can/cần, to/tổ, on/ơn, an/an toàn) are in neither
# list and count only by shape.
_VI_WORDS = _words(
    "nganh hoc phi diem chuan xet tuyen truong nam bao nhieu cho em hoi khong duoc nao gi la cua",
    "nhung cac sinh vien dai cao dang ky chi tieu nop ho so han khi dau bang van lien thong ket",
    "qua bong toan dien tri tue nhan tao may tinh khoa thuat phan mem cong nghe tin quoc te chuong",
    "trinh tai nang dieu kien thoi gian ngay thang muon biet gium voi roi vay oi da thua xin chao",
    "cam trung nhap thi mot hai ba bon lam sao nhe nha minh ban thay ko dc bn mk mn ad ntn hb sv",
    "khmt ktmt cntt ktpm attt httt khdl ttnt tmdt dgnl thpt ktx clc vb",
)
_EN_WORDS = _words(
    "the what which who whom how when where why is are was were does did much many for of with",
    "about from and or you your i please tell know want there have has this that these those it",
    "its in at by if as be been would could should will fee fees cost costs score scores tuition",
    "major majors program programs programme degree exam year years thanks thank hello apply",
    "deadline course courses student students university admission admissions scholarship english",
)
_LETTERS = re.compile(r"[^\W\d_]+")
# Latin letters with diacritics (precomposed or combining), as Vietnamese writes them.
_MARKED = re.compile(r"[\u00c0-\u00ff\u0100-\u01b0\u0300-\u036f\u1ea0-\u1ef9]")


def detect_language(text: str) -> Language:
    """Whether a question or passage is Vietnamese or English; Vietnamese without evidence.

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
    return "en" if en >= 1.0 and en > vi else "vi"


# -- tokens ------------------------------------------------------------------------------------

# Vietnamese thousands use dots ("40.000.000"), decimals a comma or a dot ("3,5", "28.5"). Decimals
# become "28_5", a term PostgreSQL reads as the phrase 28 <-> 5 on both sides.
_THOUSANDS = re.compile(r"(?<=\d)\.(?=\d{3}(?!\d))")
_DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d{1,2}(?!\d))")
_DECIMAL_DOT = re.compile(r"(?<=\d)\.(?=\d)")
# Within a clause words are separated by spaces, hyphens, "&", "/", "+", apostrophes; any other
# character (punctuation, line breaks, emoji, control characters) ends the clause, so no pair is
# made across it.
_CLAUSE_BREAK = re.compile(r"[^a-z0-9_ \t\-–—&/+'’]+")
_TOKEN = re.compile(r"\d+(?:_\d+)*|[a-z0-9]+")
# Spelling variants that fold apart: kĩ/kỹ thuật, quản lí/lý, thạc sĩ/sỹ, tỉ/tỷ, mĩ/mỹ, qui/quy.
_SPELLING = {"ki": "ky", "li": "ly", "si": "sy", "ti": "ty", "mi": "my", "qui": "quy"}


def _canonical(token: str) -> str:
    if token[0].isdigit():
        if token.isdigit():
            return str(int(token)) if len(token) <= 2 else token  # "07/7" and "7/7" alike
        whole, *fraction = token.split("_")
        if len(fraction) == 1:
            decimals = fraction[0].rstrip("0")  # 28.50 = 28.5, 6.0 = 6
            return f"{whole}_{decimals}" if decimals else whole
        return token
    token = _SPELLING.get(token, token)
    # Plural -s (fees, programs). No Vietnamese syllable ends in "s", so this never touches one.
    if len(token) >= 4 and token[-1] == "s" and token.isalpha():
        if token.endswith("ies") and len(token) >= 5:
            return token[:-3] + "y"
        if not token.endswith(("ss", "us", "is")):
            return token[:-1]
    return token


def _clauses(text: str) -> list[list[str]]:
    """Raw folded tokens, grouped by clause."""
    folded = _strip_marks(text).replace("_", " ")
    folded = _THOUSANDS.sub("", folded)
    folded = _DECIMAL_DOT.sub("_", _DECIMAL_COMMA.sub("_", folded))
    clauses = []
    for part in _CLAUSE_BREAK.split(folded):
        found = _TOKEN.findall(part)
        if found:
            clauses.append(found)
    return clauses


# A full stop after one of these is an abbreviation, not the end of a sentence: "TP. Hồ Chí
# Minh", "ThS. Nguyễn", "PGS. TS.", "Tp.", "v.v.", an initial; and the usual ones as a student
# types them, lower-case ("ở tp. hcm", "ths. lê"). Not a longer word or acronym: "… Việt Nam."
# and "… của ĐHQG." end sentences.
_ABBREVIATED = re.compile(
    r"(?:^|[\s(.])(?:[A-ZĐ]{1,2}|[A-ZĐ][a-zđ]|[A-ZĐ][a-zđ]?[A-ZĐ]{1,2}|[a-zđ]|"
    r"(?i:tp|tx|ths|ts|pgs|gs|vd|nxb))\.$"
)


def ends_with_abbreviation(text: str) -> bool:
    """Whether ``text`` ends with an abbreviation's full stop ("… Quốc gia TP."), so that a
    sentence splitter should not cut after it."""
    return bool(_ABBREVIATED.search(text))


def tokens(text: str) -> list[str]:
    """The folded, normalised words of a text in order: what keyword terms and guard match on."""
    return [_canonical(t) for clause in _clauses(text) for t in clause]


# -- abbreviations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Abbreviation:
    """One entry of abbreviations.yaml (see the comments there)."""

    expansions: tuple[str, ...]  # the first is what the dense embedder gets
    chat: bool = False  # informal shorthand: Vietnamese text only
    at_end: bool = False  # only at the end of a clause ("v", "z")


# Words that may follow a clause-final "v"/"z" ("bn v ad", "v ạ", "z mn ơi"), folded: the
# particles and vocatives that close a chat question.
CLOSING_PARTICLES = _words("ad admin a ak ah oi nhe nha nhi ne mn ha u")
_WORD = re.compile(r"[^\W_]+")
_GLUE = "-./@_&'’"  # a word touching one of these is part of a larger form (e-learning, tp.hcm)


class TextProcessor:
    """Keyword terms for documents and questions, and the question text for the dense embedder."""

    def __init__(
        self,
        abbreviations: Mapping[str, Abbreviation],
        stopwords: Mapping[str, Collection[str]],
    ) -> None:
        self._abbreviations = {fold(k): v for k, v in abbreviations.items()}
        self._stopwords: dict[str, frozenset[str]] = {
            lang: frozenset(_canonical(t) for w in words for t in _TOKEN.findall(fold(w)))
            for lang, words in stopwords.items()
        }
        # Shorthand that is itself a stopword ("ko", "ad", "bn") is not expanded into keyword
        # terms: its expansion would only be removed again, or add noise ("ad" -> "anh chị").
        vi_stop = self._stopwords.get("vi", frozenset())
        self._term_expansions = {
            key: tuple(tokens(e) for e in abbr.expansions)
            for key, abbr in self._abbreviations.items()
            if key not in vi_stop
        }

    def abbreviations(self) -> Mapping[str, Abbreviation]:
        """The abbreviation list, keyed by the folded abbreviation (read-only)."""
        return MappingProxyType(self._abbreviations)

    @cached_property
    def dense_expansions(self) -> Mapping[str, str]:
        """Each abbreviation and what the dense embedder gets for it (its first expansion)."""
        return MappingProxyType({k: a.expansions[0] for k, a in self._abbreviations.items()})

    # -- keyword terms --

    def keyword_text(self, text: str) -> str:
        """Space-separated terms of a chunk or FAQ question, for ``to_tsvector('simple', …)``."""
        return " ".join(self._terms(text, query=False))

    def doc_terms(self, text: str) -> list[str]:
        """The document-side terms for BM25: ``keyword_text(text).split()``."""
        return self._terms(text, query=False)

    def query_terms(self, text: str) -> list[str]:
        """Distinct terms of a question, question words removed; each matches ``[a-z0-9_]+``."""
        return list(dict.fromkeys(self._terms(text, query=True)))

    def _terms(self, text: str, *, query: bool) -> list[str]:
        language = detect_language(text)
        stop = self._stopwords.get(language, frozenset()) if query else frozenset()
        out: list[str] = []
        for clause in _clauses(text):
            sequence: list[str] = []
            for i, raw in enumerate(clause):
                expansions = self._term_expansions.get(raw)
                abbr = self._abbreviations.get(raw)
                if (
                    expansions is None
                    or abbr is None
                    or (abbr.chat and language != "vi")
                    or (abbr.at_end and not all(t in CLOSING_PARTICLES for t in clause[i + 1 :]))
                ):
                    sequence.append(_canonical(raw))
                    continue
                if expansions[0] != [raw]:  # "thpt" is written "THPT", not expanded
                    out.append(raw)
                sequence.extend(expansions[0])
                for alternative in expansions[1:]:
                    out.extend(_unigrams_and_pairs(alternative, stop))
            out.extend(_unigrams_and_pairs(sequence, stop))
        return out

    # -- dense --

    def expand_query(self, text: str) -> str:
        """The question for the dense embedder, shorthand written out in full with diacritics.

        Only standalone words are replaced ("k" but not "k19" or "500k"); other words keep their
        casing. Chat shorthand is expanded in Vietnamese text only. The text comes back in NFC:
        in decomposed text a word would end at its first combining mark ("lượng" as "lượ" +
        "ng", and "ng" is shorthand for "người").
        """
        text = unicodedata.normalize("NFC", text)
        language = detect_language(text)

        def replace(match: re.Match[str]) -> str:
            word = match.group(0)
            abbr = self._abbreviations.get(fold(word))
            if abbr is None or (abbr.chat and language != "vi"):
                return word
            if not _standalone(text, match.start(), match.end()):
                return word
            if abbr.at_end and not _clause_ends(text, match.end()):
                return word
            expansion = abbr.expansions[0]
            if abbr.chat and word[0].isupper():
                expansion = expansion[0].upper() + expansion[1:]
            return expansion

        return _WORD.sub(replace, text)


def _unigrams_and_pairs(sequence: list[str], stop: frozenset[str]) -> Iterable[str]:
    yield from (t for t in sequence if t not in stop)
    for a, b in itertools.pairwise(sequence):
        if (a in stop and b in stop) or (a[0].isdigit() and b[0].isdigit()):
            continue  # "cho_em", "bao_nhieu"; and "7_7" from "7/7" would read as 7.7
        yield f"{a}_{b}"


def _standalone(text: str, start: int, end: int) -> bool:
    if start > 0 and text[start - 1] in _GLUE:
        return False
    if end < len(text) and text[end] in _GLUE:
        # A full stop after the word still ends it ("... v.") unless a word follows at once.
        return text[end] == "." and (end + 1 == len(text) or not text[end + 1].isalnum())
    return True


_NEXT = re.compile(r"\s*([^\W_]+|\S)?")


def _clause_ends(text: str, end: int) -> bool:
    """Whether only particles ("ad", "ạ", "ơi") stand between ``end`` and the end of the clause."""
    while True:
        match = _NEXT.match(text, end)
        nxt = match.group(1) if match else None
        if nxt is None or not (nxt[0].isalnum()):
            return True  # end of text, punctuation, emoji
        if fold(nxt) not in CLOSING_PARTICLES:
            return False
        end = match.end() if match else len(text)


# -- loading ---------------------------------------------------------------------------------------


def load_text_processor(settings: TextSettings | None = None) -> TextProcessor:
    """The bundled abbreviations and stopwords, extended by ``settings.abbreviations_file``."""
    override = settings.abbreviations_file if settings is not None else None
    return _load(override.resolve() if override is not None else None)


@lru_cache(maxsize=8)
def _load(override: Path | None) -> TextProcessor:
    entries = _read_abbreviations(DATA_DIR / "abbreviations.yaml")
    if override is not None:
        for key, value in _read_abbreviations(override).items():
            if value is None:
                entries.pop(key, None)
            else:
                entries[key] = value
    stopwords = read_yaml(DATA_DIR / "stopwords.yaml")
    return TextProcessor(
        {k: v for k, v in entries.items() if v is not None},
        {lang: [str(w) for w in words or []] for lang, words in stopwords.items()},
    )


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping, or ConfigError naming the file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _read_abbreviations(path: Path) -> dict[str, Abbreviation | None]:
    data = read_yaml(path)
    unknown = set(data) - {"chat", "domain"}
    if unknown:
        raise ConfigError(f"{path}: unknown sections {sorted(unknown)}; expected chat, domain")
    entries: dict[str, Abbreviation | None] = {}
    for section in ("chat", "domain"):
        items = data.get(section) or {}
        if not isinstance(items, dict):
            raise ConfigError(f"{path}: `{section}` must map abbreviations to expansions")
        for key, value in items.items():
            folded = fold(str(key))
            if not _ABBREVIATION_KEY.fullmatch(folded):
                raise ConfigError(f"{path}: {key!r} is not one word of letters and digits")
            entries[folded] = _abbreviation(path, str(key), value, chat=section == "chat")
    return entries


_ABBREVIATION_KEY = re.compile(r"[a-z0-9]+")


def _abbreviation(path: Path, key: str, value: Any, *, chat: bool) -> Abbreviation | None:
    if value is None:
        return None
    options: dict[str, Any] = value if isinstance(value, dict) else {"expand": value}
    expand = options.get("expand")
    expansions = tuple(str(e) for e in (expand if isinstance(expand, list) else [expand]) if e)
    if not expansions or set(options) - {"expand", "at_end"}:
        raise ConfigError(f"{path}: entry {key!r} needs `expand` (and optionally `at_end`)")
    return Abbreviation(expansions, chat=chat, at_end=bool(options.get("at_end", False)))
