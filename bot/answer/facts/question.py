"""What a question asks of the facts tables: the majors, programme, method, combination, year,
score and attribute it names, as the guard's vocabulary and the catalogue read them."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from bot.answer.read import Read
from retrieval.facts.book import FactsBook, Major
from retrieval.facts.model import COMBINATIONS, CUTOFF, FEE, QUOTA
from retrieval.guard.verdicts import Facets
from retrieval.text.folding import fold
from retrieval.text.pack import alternatives, load_pack
from retrieval.text.terms import tokens

_WORDS = load_pack().facts
SCORE_CHECK = re.compile(alternatives(_WORDS.score_check))
_OFFER = [re.compile(p) for p in _WORDS.offer]
_WHETHER = re.compile(alternatives(_WORDS.asks_whether))
OFFER_PROGRAMME = re.compile(alternatives(_WORDS.offer_programme))
# The question asks for the standard programme by name ("hệ chính quy", "đại trà").
STANDARD_ASKED = re.compile(rf"\b{alternatives(_WORDS.standard_asked)}\b")
_CLAUSE_END = re.compile(r"[,;:!?]")
_THIS_YEAR = re.compile(rf"\b{alternatives(_WORDS.this_year)}\b")
_WHICH = re.compile(r"\b(?:nganh nao|nhung nganh|cac nganh|nganh gi|which)\b")
_HIGHEST, _LOWEST, _MORE, _LESS = (
    re.compile(rf"\b{alternatives(tuple(re.escape(w) for w in words))}\b")
    for words in (_WORDS.highest, _WORDS.lowest, _WORDS.more, _WORDS.less)
)
MAJOR_CODE = "mã ngành"  # the guard's attribute for a major's code
TABLE_ATTRIBUTES = (CUTOFF, QUOTA, FEE, COMBINATIONS)  # what a question may ask of the tables
_MAX_NAME_WORDS = 10  # "Mạng máy tính và truyền thông dữ liệu" has 8


@dataclass(frozen=True)
class FactsQuestion:
    """What a question asks of the tables."""

    majors: tuple[Major, ...]
    programme: str | None
    method: str | None
    combination: str | None
    year: int | None
    score: float | None
    attribute: str | None
    whether: bool
    which: bool = False  # "ngành nào", "những ngành", "which"
    code: bool = False  # asks the major's code too
    beyond: bool = False  # asks something no table holds (a fee, a condition, a date...)
    extreme: str | None = None  # "highest" or "lowest"
    compare: str | None = None  # "more" or "less"
    this_year: bool = False  # "năm nay": the admission year
    campus: str | None = None  # the one campus it names ("cơ sở phía Nam")
    per: str | None = None  # "một năm", "mỗi học kỳ", "1 tín chỉ": what a fee asked is per
    years: frozenset[int] = frozenset()  # every year it names ("so 2024 vs 2025")
    standard: bool = False  # names the standard programme too ("clc so với hệ chuẩn")


def read_facts_question(read: Read, book: FactsBook) -> FactsQuestion:
    """The majors, programme, method, combination, year, score and attribute the question
    names, as the school's vocabulary (``read``: the question read once, its shorthand written
    out: "hp" is học phí) and the catalogue read them."""
    question = read.question
    facets = read.asks.facets if read.asks is not None else {}
    folded = fold(question)
    methods = set(facets.get("method", ()))
    for word, method in _WORDS.column_methods.items():
        if re.search(rf"\b{re.escape(word)}\b", folded):
            methods.add(method)
    years = facets.get("year", frozenset())
    combos = facets.get("combination", frozenset())
    named = set(facets.get("attribute", ()))
    attributes = [a for a in named if a in TABLE_ATTRIBUTES]
    programmes = facets.get("programme", frozenset())
    campuses = facets.get("campus", frozenset())
    return FactsQuestion(
        majors=tuple(book.majors_in(question, read.typed.get("major", ()))),
        programme=next(iter(programmes)) if len(programmes) == 1 else None,
        method=next(iter(methods)) if len(methods) == 1 else None,
        combination=next(iter(combos)).upper() if len(combos) == 1 else None,
        year=int(next(iter(years))) if len(years) == 1 else None,
        score=_score(read.typed, question),
        per=_per(folded),
        attribute=attributes[0] if len(attributes) == 1 else None,
        whether=bool(_WHETHER.search(folded)),
        which=bool(_WHICH.search(folded)),
        this_year=bool(_THIS_YEAR.search(folded)),
        code=MAJOR_CODE in named,
        beyond=bool(named - {*TABLE_ATTRIBUTES, MAJOR_CODE}),
        extreme="highest"
        if _HIGHEST.search(folded)
        else "lowest"
        if _LOWEST.search(folded)
        else None,
        compare="more" if _MORE.search(folded) else "less" if _LESS.search(folded) else None,
        campus=next(iter(campuses)) if len(campuses) == 1 else None,
        years=frozenset(int(y) for y in years if y.isdigit()),
        standard=bool(STANDARD_ASKED.search(folded)),
    )


def _score(facets: Facets, question: str) -> float | None:
    """The score a question gives: its one number, or of several ("tb 3 môn khối A00 được 27
    điểm") the one it calls points ("27 điểm", "25d")."""
    numbers = {n.replace("_", ".") for n in facets.get("number", ())}
    if len(numbers) > 1:
        words = [w.replace("_", ".") for w in tokens(question)]
        numbers = {
            w for w, after in itertools.pairwise(words) if w in numbers and after in _WORDS.points
        }
    if len(numbers) != 1:
        return None
    value = float(next(iter(numbers)))
    return value if 0 < value <= 1200 else None


def compares(text: str) -> bool:
    """Whether ``text`` asks which of two is more or less ("mắc hơn bao nhiêu")."""
    folded = fold(text)
    return bool(_MORE.search(folded) or _LESS.search(folded))


def offered_name(question: str) -> str | None:
    """The name after "trường có ngành …" in ``question``, or None."""
    folded = fold(question).strip(" ?.!")
    for pattern in _OFFER:
        match = pattern.search(folded)
        if match:
            # A name ends with its clause: "có ngành nào, học lịch ntn" names none.
            start = match.start("name")
            clause = _CLAUSE_END.split(folded[start:], maxsplit=1)[0]
            match = pattern.search(f"{folded[:start]}{clause}".strip())
        if match:
            name = match.group("name").strip()
            if set(name.split()) <= _WORDS.not_a_name:
                return None  # "có mở ngành mới không": no major named
            if len(name.split()) <= _MAX_NAME_WORDS:
                return _as_written(question, name)
    return None


def _as_written(question: str, folded_name: str) -> str:
    """The words of ``question`` that fold to ``folded_name`` ("Dược" for "duoc")."""
    words = question.split()
    size = len(folded_name.split())
    for start in range(len(words) - size + 1):
        piece = " ".join(words[start : start + size])
        if fold(piece).strip(" ?.!,") == folded_name:
            return piece.strip(" ?.!,")
    return folded_name


def _per(folded: str) -> str | None:
    """What the question asks a fee per ("1 năm", "mỗi học kỳ", "một tín chỉ")."""
    for word, per in _WORDS.periods.items():
        if re.search(rf"\b(?:1|mot|moi|per|a|each) {re.escape(word)}\b", folded):
            return per
    return None
