"""Keyword terms and query rewriting: what keyword search and the guard match on.

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
what a compound should match. BM25 (retrieval.search.keyword) keeps each pair as one term.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from retrieval.text.folding import fold, strip_marks
from retrieval.text.language import detect_language
from retrieval.text.pack import load_pack

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


def canonical_term(token: str) -> str:
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


def clauses(text: str) -> list[list[str]]:
    """Raw folded tokens, grouped by clause."""
    folded = strip_marks(text).replace("_", " ")
    folded = _THOUSANDS.sub("", folded)
    folded = _DECIMAL_DOT.sub("_", _DECIMAL_COMMA.sub("_", folded))
    clauses = []
    for part in _CLAUSE_BREAK.split(folded):
        found = _TOKEN.findall(part)
        if found:
            clauses.append(found)
    return clauses


def tokens(text: str) -> list[str]:
    """The folded, normalised words of a text in order: what keyword terms and guard match on."""
    return [canonical_term(t) for clause in clauses(text) for t in clause]


def written_marks(text: str) -> dict[str, frozenset[str]]:
    """Each folded word of ``text`` (a keyword term) with the marks it is written with there, as
    sorted combining marks ("mấy": "may" with a circumflex and an acute, "máy": an acute only):
    what folding loses. A word written with no marks has "" among its forms. Where the tone mark
    sits ("hoà", "hòa") and the spellings ``tokens`` makes one ("kì", "kỳ") do not count."""
    forms: dict[str, set[str]] = {}
    for word in re.findall(r"\w+", text.lower()):
        folded = strip_marks(word)
        if not _TOKEN.fullmatch(folded) or folded.isdigit():
            continue
        decomposed = unicodedata.normalize("NFD", word)
        marks = "".join(sorted(c for c in decomposed if unicodedata.combining(c)))
        forms.setdefault(canonical_term(folded), set()).add(marks + ("đ" if "đ" in word else ""))
    return {term: frozenset(marks) for term, marks in forms.items()}


# -- abbreviations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Abbreviation:
    """One entry of abbreviations.yaml (see the comments there)."""

    expansions: tuple[str, ...]  # the first is what the dense embedder gets
    chat: bool = False  # informal shorthand: Vietnamese text only
    at_end: bool = False  # only at the end of a clause ("v", "z")
    # the dense embedder gets the second expansion next to one of these words, folded ("cần
    # đk gì": điều kiện, "đk xét tuyển": đăng ký)
    second_near: frozenset[str] = frozenset()


# Words that may follow a clause-final "v"/"z" ("bn v ad", "v ạ", "z mn ơi"), folded: the
# particles and vocatives that close a chat question (language pack, questions.closing).
CLOSING_PARTICLES = load_pack().questions.closing
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
            lang: frozenset(canonical_term(t) for w in words for t in _TOKEN.findall(fold(w)))
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
        for clause in clauses(text):
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
                    sequence.append(canonical_term(raw))
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
        return self.written_out(text).text

    def written_out(self, text: str) -> WrittenOut:
        """``expand_query``'s text, with where each word written out came from: a value read
        in the written-out text is said by the student's words ("hp" for "học phí")."""
        text = unicodedata.normalize("NFC", text)
        language = detect_language(text)
        pieces: list[str] = []
        edits: list[Edit] = []
        last = at = 0
        for match in _WORD.finditer(text):
            expansion = self._written(text, match, language)
            if expansion is None:
                continue
            kept = text[last : match.start()]
            at += len(kept)
            pieces += [kept, expansion]
            edits.append(Edit(match.start(), match.end(), at, at + len(expansion)))
            at += len(expansion)
            last = match.end()
        pieces.append(text[last:])
        return WrittenOut(text, "".join(pieces), tuple(edits))

    def _written(self, text: str, match: re.Match[str], language: str) -> str | None:
        """What the word ``match`` is written out as, or None when it stays."""
        word = match.group(0)
        abbr = self._abbreviations.get(fold(word))
        if abbr is None or (abbr.chat and language != "vi"):
            return None
        if not _standalone(text, match.start(), match.end()):
            return None
        if abbr.at_end and not _clause_ends(text, match.end()):
            return None
        expansion = abbr.expansions[0]
        if abbr.second_near and len(abbr.expansions) > 1 and _near(text, match, abbr.second_near):
            expansion = abbr.expansions[1]
        if abbr.chat and word[0].isupper():
            expansion = expansion[0].upper() + expansion[1:]
        return expansion


@dataclass(frozen=True)
class Edit:
    """A word written out: ``source[start:end]`` became ``text[at:at_end]``."""

    start: int
    end: int
    at: int
    at_end: int


@dataclass(frozen=True)
class WrittenOut:
    """A text (``source``, in NFC) with its shorthand written out (``text``)."""

    source: str
    text: str
    edits: tuple[Edit, ...] = ()

    def source_of(self, start: int, end: int) -> tuple[int, int]:
        """The characters of ``source`` that ``text[start:end]`` was written from."""
        return self._back(start, end=False), self._back(end, end=True)

    def _back(self, position: int, *, end: bool) -> int:
        shift = 0
        for edit in self.edits:
            if position < edit.at or (end and position == edit.at):
                break
            if position < edit.at_end or (end and position == edit.at_end):
                return edit.end if end else edit.start
            shift = edit.at_end - edit.end
        return position - shift


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
_PREVIOUS = re.compile(r"([^\W_]+)\s*$")


def _near(text: str, match: re.Match[str], words: frozenset[str]) -> bool:
    """Whether the word before ``match`` or the word after it (in its clause) is one of
    ``words``."""
    after = _NEXT.match(text, match.end())
    before = _PREVIOUS.search(text, 0, match.start())
    return any(
        found is not None and found.group(1) is not None and fold(found.group(1)) in words
        for found in (after, before)
    )


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
