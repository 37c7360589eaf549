"""Exact answers from the school's catalogue and facts tables, before tier 2 (issue 2/4).

Four kinds of question are answered from the tables' values, quoted as the tables write them,
with their year and source, and the documents' disclaimer:

- **score checks** ("em được 25,5 điểm có đỗ ngành Khoa học Dữ liệu không"): the cut-off of the
  latest year that has one, the comparison stated; every programme and method the question
  leaves open is listed with its own comparison, never one picked silently;
- **cut-offs, quotas, combinations** of named majors ("điểm chuẩn ktpm", "ngành TTNT xét tổ hợp
  nào");
- **whether** a major takes a combination or a method ("ngành TTNT có xét học bạ không": the
  table's "—" says no);
- **whether the school has a major** ("trường có ngành Dược không"): a plain no with the
  closest majors it does have, given only when the catalogue is the school's (it names several
  majors) and nothing the search found names the major either.

Anything else, or a question the tables do not hold the value for, goes on to tier 2.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from bot.answer import replies
from bot.answer.found import Found, Timer
from bot.answer.parts import AnswererParts
from bot.answer.replies import Answer
from bot.core.citations import Citation
from bot.core.types import Language
from retrieval.facts.book import FactsBook, Major
from retrieval.facts.extract import is_code
from retrieval.facts.model import COMBINATIONS, CUTOFF, FEE, QUOTA, Fact, Place
from retrieval.guard.checks import NearMissGuard
from retrieval.text.folding import fold
from retrieval.text.pack import alternatives, load_pack

_WORDS = load_pack().facts
_SCORE_CHECK = re.compile(alternatives(_WORDS.score_check))
_OFFER = [re.compile(p) for p in _WORDS.offer]
_WHETHER = re.compile(alternatives(_WORDS.asks_whether))
_OFFER_PROGRAMME = re.compile(alternatives(_WORDS.offer_programme))
# The question asks for the standard programme by name ("hệ chính quy", "đại trà").
_STANDARD_ASKED = re.compile(r"\b(?:chinh quy|dai tra|chuong trinh chuan|he chuan)\b")
_THIS_YEAR = re.compile(rf"\b{alternatives(_WORDS.this_year)}\b")
_WHICH = re.compile(r"\b(?:nganh nao|nhung nganh|cac nganh|nganh gi|which)\b")
_HIGHEST, _LOWEST, _MORE, _LESS = (
    re.compile(rf"\b{alternatives(tuple(re.escape(w) for w in words))}\b")
    for words in (_WORDS.highest, _WORDS.lowest, _WORDS.more, _WORDS.less)
)
MAJOR_CODE = "mã ngành"  # the guard's attribute for a major's code
TABLE_ATTRIBUTES = (CUTOFF, QUOTA, FEE, COMBINATIONS)  # what a question may ask of the tables
_MIN_MAJORS = 3  # a catalogue naming fewer majors is not the school's list: no "no" from it
today = date.today  # the day "năm nay" is read on (a test may hold it still)
_CLOSEST = 3
_MAX_NAME_WORDS = 10  # "Mạng máy tính và truyền thông dữ liệu" has 8
_TOP_SCORE = 40.0  # a score above this is on a thousands scale (ĐGNL)


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


class FactsTier:
    """Answers from the facts tables, or None to leave the question to tier 2."""

    def __init__(self, parts: AnswererParts) -> None:
        self.parts = parts
        self.settings = parts.settings

    async def answer(self, found: Found, timer: Timer) -> Answer | None:
        book = found.facts
        if book is None or not book.majors or found.decision.accepted is not None:
            return None
        if self._about_another_school(found.question):
            return None
        with timer.stage("facts"):
            return self.decide(found.question, found, book)

    def _about_another_school(self, question: str) -> bool:
        """The question names a school that is not this one: its tables do not answer it."""
        if "institution" not in self.parts.guard.facets(question):
            return False
        folded = fold(question)
        return not any(fold(n) in folded for n in self.settings.brand.own_names if n.strip())

    def decide(self, question: str, found: Found, book: FactsBook) -> Answer | None:
        guard = self.parts.guard
        asked = read_facts_question(question, book, guard, found.expanded)
        language = found.language
        year = book.admission_year(self.settings.answer.admission_year, today())
        now = _Now(year, book.publications.get(year))
        if asked.this_year and asked.year is None:
            asked = replace(asked, year=year)
        if not asked.majors and asked.score is None:
            if asked.which and asked.combination and asked.attribute in (None, COMBINATIONS):
                return self._taking(asked.combination, book, language)
            if asked.which and asked.extreme and asked.attribute in (CUTOFF, QUOTA):
                return self._extreme(asked, book, language)
        comparing = (asked.compare is not None or asked.which) and asked.score is None
        if len(asked.majors) >= 2 and asked.attribute in (CUTOFF, QUOTA) and comparing:
            return self._comparison(asked, book, language)
        if (
            asked.programme is not None
            and asked.whether
            and _OFFER_PROGRAMME.search(fold(question))
            and len(book.majors) >= _MIN_MAJORS
            and fold(asked.programme) not in map(fold, book.programmes)
            and not _programme_named(asked.programme, found, guard)
        ):
            return self._no_such_programme(asked.programme, book, language)
        if not asked.majors:
            missing = offered_name(question)
            if missing is None or len(book.majors) < _MIN_MAJORS:
                return None
            if _named_in(missing, found):
                return None  # the documents name it: not ours to deny
            return self._no_such_major(missing, book, language)
        if asked.score is not None and _SCORE_CHECK.search(fold(question)):
            return self._score_check(asked, book, language, now)
        if asked.whether and (asked.combination or asked.method) and asked.score is None:
            return self._whether(asked, book, language)
        if asked.beyond:
            return None  # part of it is for the documents: tier 2 answers the whole
        if asked.attribute in TABLE_ATTRIBUTES and asked.score is None:
            if _faq_quoted(found, asked):
                return None  # an FAQ entry staff wrote about it is quoted by tier 2 first
            return self._values(asked, book, language)
        if offered_name(question) is not None and asked.attribute is None:
            standard = bool(_STANDARD_ASKED.search(fold(question)))
            return self._has_major(asked, standard, book, language)
        return None

    # -- the kinds of answer ------------------------------------------------------------------

    def _score_check(
        self, asked: FactsQuestion, book: FactsBook, language: Language, now: _Now
    ) -> Answer | None:
        score = asked.score
        assert score is not None  # checked by the caller
        asked, missing = _year_held(asked, book, CUTOFF)
        lines: list[str] = []
        places: list[Place] = []
        for major in asked.majors:
            rows = _rows(book, major, CUTOFF, asked, on_scale_of=score)
            if not rows:
                return None
            for fact in rows:
                places.append(fact.place)
                lines.append(self._compared(fact, score, len(places), language))
        year = max(f.year for f in _rows_all(book, asked.majors, CUTOFF, asked, score))
        lead = (
            f"So với điểm chuẩn năm {year} (mới nhất mình có), {_num(score)} điểm của bạn:"
            if language == "vi"
            else f"Against the {year} cut-off (the latest I have), your {_num(score)} points:"
        )
        caveat = _caveat(year, missing, places, language, now)
        body = "\n".join([lead, *lines, "", caveat])
        return self._cited(body, places, language, "score check")

    def _compared(self, fact: Fact, score: float, n: int, language: Language) -> str:
        label = _row_label(fact, language)
        if not fact.offered:
            return (
                f"- {label}: không xét theo phương thức này [{n}]."
                if language == "vi"
                else f"- {label}: not admitted this way [{n}]."
            )
        assert fact.value is not None
        gap = round(score - fact.value, 2)
        if language == "vi":
            verdict = (
                f"cao hơn {_num(gap)} điểm"
                if gap > 0
                else f"thấp hơn {_num(-gap)} điểm"
                if gap < 0
                else "bằng điểm chuẩn"
            )
            return f"- {label}: điểm chuẩn {fact.text} [{n}], {_num(score)} {verdict}."
        verdict = (
            f"{_num(gap, 'en')} above"
            if gap > 0
            else f"{_num(-gap, 'en')} below"
            if gap < 0
            else "equal to the cut-off"
        )
        return f"- {label}: cut-off {fact.text} [{n}], {_num(score, 'en')} is {verdict}."

    def _values(self, asked: FactsQuestion, book: FactsBook, language: Language) -> Answer | None:
        attribute = asked.attribute
        assert attribute is not None
        asked, missing = _year_held(asked, book, attribute)
        lines: list[str] = []
        places: list[Place] = []
        for major in asked.majors:
            rows = _rows(book, major, attribute, asked)
            if not rows:
                return None
            for fact in rows:
                places.append(fact.place)
                value = (
                    ", ".join(fact.combinations)
                    if attribute == COMBINATIONS
                    else _amount(fact)
                    if attribute == FEE
                    else fact.text
                    if fact.offered
                    else ("không xét" if language == "vi" else "not admitted this way")
                )
                label = _row_label(fact, language, code=True)  # the table gives the code
                lines.append(f"- {label}, {fact.year}: {value} [{len(places)}]")
        name = _ATTRIBUTE_NAMES[attribute][0 if language == "vi" else 1]
        lead = f"{name.capitalize()}:"
        if missing is not None:
            lead = (
                f"Mình chưa có {name} năm {missing}; {name} mới nhất mình có:"
                if language == "vi"
                else f"I do not have the {missing} {name} yet; the latest I have:"
            )
        return self._cited("\n".join([lead, *lines]), places, language, attribute)

    def _whether(self, asked: FactsQuestion, book: FactsBook, language: Language) -> Answer | None:
        lines: list[str] = []
        places: list[Place] = []
        for major in asked.majors:
            if asked.combination:
                rows = _rows(book, major, COMBINATIONS, asked)
                if not rows:
                    return None
                fact = rows[0]
                places.append(fact.place)
                listed = ", ".join(fact.combinations)
                more = (
                    f"; các tổ hợp xét tuyển: {listed}"
                    if language == "vi"
                    else f"; combinations: {listed}"
                )
                lines.append(
                    _verdict(
                        asked.combination in fact.combinations, fact, asked.combination, language
                    )
                    + f"{more} [{len(places)}]."
                )
                continue
            rows = [f for f in _rows(book, major, CUTOFF, asked) if f.method == asked.method]
            if not rows or rows[0].year < book.newest_year:
                # A "—" in a past round's table: this year's rule is in the documents.
                return None
            for fact in rows:
                places.append(fact.place)
                cutoff = ""
                if fact.offered:
                    cutoff = (
                        f", điểm chuẩn {fact.text}"
                        if language == "vi"
                        else f", cut-off {fact.text}"
                    )
                lines.append(
                    _verdict(fact.offered, fact, str(fact.method), language)
                    + f"{cutoff} [{len(places)}]."
                )
        return self._cited("\n".join(lines), places, language, "whether")

    def _taking(self, combination: str, book: FactsBook, language: Language) -> Answer | None:
        """ "Những ngành nào xét D07": the majors whose latest combinations include it."""
        latest: dict[tuple[str, str | None], Fact] = {}
        for f in book.facts:
            if f.attribute == COMBINATIONS:
                key = (fold(f.major), f.programme)
                if key not in latest or f.year > latest[key].year:
                    latest[key] = f
        if not latest:
            return None
        taking = [f for f in latest.values() if combination in f.combinations]
        places = [f.place for f in taking] or [next(iter(latest.values())).place]
        names = "; ".join(
            f"{_row_label(f, language, method=False, code=True).removeprefix('Ngành ')}"
            f" ({f.year}) [{n}]"
            for n, f in enumerate(taking, start=1)
        )
        if language == "vi":
            body = (
                f"Các ngành xét tổ hợp {combination}: {names}."
                if taking
                else f"Theo bảng tổ hợp mình có, không ngành nào xét tổ hợp {combination} [1]."
            )
        else:
            body = (
                f"Majors that take {combination}: {names}."
                if taking
                else f"In the combinations table I have, no major takes {combination} [1]."
            )
        return self._cited(body, places, language, "majors by combination")

    def _extreme(self, asked: FactsQuestion, book: FactsBook, language: Language) -> Answer | None:
        """ "Ngành nào điểm chuẩn cao nhất": per method (in the table's order), the major with
        the highest (lowest) value of the latest year; every programme counts."""
        attribute = asked.attribute
        rows = [
            f for f in book.facts
            if f.attribute == attribute and f.offered and f.value is not None
            and (asked.method is None or f.method == asked.method)
            and (asked.programme is None or f.programme == asked.programme)
            and (asked.year is None or f.year == asked.year)
            and (asked.campus is None or f.campus in (asked.campus, None))
        ]  # fmt: skip
        if not rows:
            return None
        year = max(f.year for f in rows)
        by_method: dict[tuple[str | None, str | None], list[Fact]] = {}
        for f in rows:
            if f.year == year:
                by_method.setdefault((f.method, f.campus), []).append(f)
        pick = max if asked.extreme == "highest" else min
        lines: list[str] = []
        places: list[Place] = []
        for facts in by_method.values():
            best = pick(f.value for f in facts if f.value is not None)
            for f in facts:
                if f.value == best:
                    places.append(f.place)
                    lines.append(f"- {_row_label(f, language)}: {f.text} [{len(places)}]")
        name = _ATTRIBUTE_NAMES[str(attribute)][0 if language == "vi" else 1]
        if language == "vi":
            word = "cao nhất" if asked.extreme == "highest" else "thấp nhất"
            if attribute == QUOTA:
                word = "nhiều nhất" if asked.extreme == "highest" else "ít nhất"
            lead = f"Ngành có {name} {word} năm {year}:"
        else:
            word = "highest" if asked.extreme == "highest" else "lowest"
            lead = f"The {word} {name} of {year}:"
        return self._cited("\n".join([lead, *lines]), places, language, "extreme")

    def _comparison(
        self, asked: FactsQuestion, book: FactsBook, language: Language
    ) -> Answer | None:
        """ "Mạng máy tính với ATTT ngành nào chỉ tiêu nhiều hơn": the two values side by side
        for each programme and method both have in one year, and which is higher."""
        attribute = str(asked.attribute)
        first, second = asked.majors[:2]
        a_rows = _rows(book, first, attribute, asked)
        b_rows = {_cell(f): f for f in _rows(book, second, attribute, asked)}
        pairs = [
            (a, b_rows[_cell(a)])
            for a in a_rows
            if _cell(a) in b_rows and a.value is not None and b_rows[_cell(a)].value is not None
        ]
        if not pairs:
            return None
        lines: list[str] = []
        places: list[Place] = []
        for a, b in pairs:
            places.extend((a.place, b.place))
            n = len(places)
            assert a.value is not None
            assert b.value is not None
            if language == "vi":
                more = "nhiều hơn" if attribute == QUOTA else "cao hơn"
                verdict = (
                    f"{a.major} {more}" if a.value > b.value
                    else f"{b.major} {more}" if b.value > a.value else "bằng nhau"
                )  # fmt: skip
                label = ", ".join(
                    x
                    for x in (
                        a.programme and f"chương trình {a.programme}",
                        a.method and f"phương thức {a.method}",
                        a.campus and f"cơ sở {a.campus}",
                    )
                    if x
                )
                lines.append(
                    f"- {a.year}{', ' + label if label else ''}: {a.major} {a.text} [{n - 1}], "
                    f"{b.major} {b.text} [{n}]: {verdict}."
                )
            else:
                more = "more" if attribute == QUOTA else "higher"
                verdict = (
                    f"{a.major} has {more}" if a.value > b.value
                    else f"{b.major} has {more}" if b.value > a.value else "equal"
                )  # fmt: skip
                label = ", ".join(
                    x for x in (a.programme, a.method, a.campus and f"{a.campus} campus") if x
                )
                lines.append(
                    f"- {a.year}{', ' + label if label else ''}: {a.major} {a.text} [{n - 1}], "
                    f"{b.major} {b.text} [{n}]: {verdict}."
                )
        name = _ATTRIBUTE_NAMES[attribute][0 if language == "vi" else 1]
        return self._cited(
            "\n".join([f"{name.capitalize()}:", *lines]), places, language, "comparison"
        )

    def _has_major(
        self, asked: FactsQuestion, standard: bool, book: FactsBook, language: Language
    ) -> Answer | None:
        """Yes, with the major's code, in the programmes its tables list it under when that is
        not the standard one; None when the question names a programme (or the standard one)
        the tables do not list it in: what the documents say answers that."""
        places = []
        lines = []
        for major in asked.majors:
            facts = [f for f in book.facts if fold(f.major) == fold(major.name)]
            programmes = {f.programme for f in facts}
            if asked.programme is not None:
                facts = [f for f in facts if f.programme == asked.programme]
            elif standard and facts:
                facts = [f for f in facts if f.programme is None]
            if (asked.programme is not None or standard) and not facts:
                return None
            only = sorted(p for p in programmes if p) if None not in programmes else []
            code = (
                f" (mã {major.code})"
                if major.code and language == "vi"
                else (f" (code {major.code})" if major.code else "")
            )
            cite = ""
            if facts:
                places.append(facts[0].place)
                cite = f" [{len(places)}]"
            within = ""
            if only and asked.programme is None:
                within = (
                    f", hệ {', '.join(only)}" if language == "vi" else f", {', '.join(only)} only"
                )
            lines.append(
                f"Có, trường đào tạo ngành {major.name}{code}{within}{cite}."
                if language == "vi"
                else f"Yes, the school offers {major.name}{code}{within}{cite}."
            )
        return self._cited("\n".join(lines), places, language, "has major")

    def _no_such_major(self, name: str, book: FactsBook, language: Language) -> Answer:
        closest = closest_majors(name, book)
        shown = ", ".join(m.name for m in closest)
        if language == "vi":
            body = (
                f"Theo danh mục ngành tuyển sinh mình có, trường chưa đào tạo ngành {name}. "
                + (f"Các ngành gần nhất: {shown}." if closest else "")
                + f"\nCác ngành trường đang tuyển: {', '.join(_named(book.majors))}."
            )
        else:
            body = (
                f"In the school's list of majors I have, there is no {name}. "
                + (f"The closest: {shown}." if closest else "")
                + f"\nMajors the school admits to: {', '.join(_named(book.majors))}."
            )
        places = list(dict.fromkeys(f.place for f in book.facts))[:1]
        return self._cited(body, places, language, "no such major")

    def _no_such_programme(self, name: str, book: FactsBook, language: Language) -> Answer:
        offered = ", ".join(book.programmes)
        if language == "vi":
            body = f"Theo thông tin tuyển sinh mình có, trường chưa đào tạo hệ {name}." + (
                f" Ngoài chương trình chuẩn, trường có: {offered}." if offered else ""
            )
        else:
            body = f"In the admission information I have, the school has no {name} programme." + (
                f" Besides the standard programme it offers: {offered}." if offered else ""
            )
        places = list(dict.fromkeys(f.place for f in book.facts))[:1]
        return self._cited(body, places, language, "no such programme")

    def _cited(self, body: str, places: list[Place], language: Language, how: str) -> Answer:
        citations = _citations(places)
        numbers = {k: n for n, k in enumerate(dict.fromkeys(map(_source, places)), start=1)}
        renumbered = _renumber(body, places, numbers)
        return Answer(
            tier="documents",
            answer=replies.documents_reply(renumbered, citations, language, self.settings.answer),
            language=language,
            citations=citations,
            reason=f"facts table: {how}",
            why={
                "documents": {"result": "answered", "how": "facts", "passages": len(citations)},
                "facts": how,
            },
            confidence=1.0,
        )


_ATTRIBUTE_NAMES = {
    CUTOFF: ("điểm chuẩn", "cut-off scores"),
    QUOTA: ("chỉ tiêu", "quotas"),
    FEE: ("học phí", "tuition fees"),
    COMBINATIONS: ("tổ hợp xét tuyển", "subject combinations"),
}


def read_facts_question(
    question: str, book: FactsBook, guard: NearMissGuard | None, expanded: str = ""
) -> FactsQuestion:
    """The majors, programme, method, combination, year, score and attribute ``question``
    names, as the guard's vocabulary and the catalogue read them (the guard reads it with its
    shorthand written out, ``expanded``: "hp" is học phí)."""
    facets = guard.facets(expanded or question) if guard is not None else {}
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
        majors=tuple(book.majors_in(question, guard)),
        programme=next(iter(programmes)) if len(programmes) == 1 else None,
        method=next(iter(methods)) if len(methods) == 1 else None,
        combination=next(iter(combos)).upper() if len(combos) == 1 else None,
        year=int(next(iter(years))) if len(years) == 1 else None,
        score=_score(question, guard.facets(question) if guard is not None else {}),
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
    )


def _score(question: str, facets: dict[str, frozenset[str]]) -> float | None:
    numbers = facets.get("number")
    if not numbers or len(numbers) != 1:
        return None
    value = float(next(iter(numbers)).replace("_", "."))
    return value if 0 < value <= 1200 else None


def offered_name(question: str) -> str | None:
    """The name after "trường có ngành …" in ``question``, or None."""
    folded = fold(question).strip(" ?.!")
    for pattern in _OFFER:
        match = pattern.search(folded)
        if match:
            name = match.group("name").strip()
            if name and len(name.split()) <= _MAX_NAME_WORDS:
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


def _caveat(
    year: int, missing: int | None, places: list[Place], language: Language, now: _Now
) -> str:
    """That this is an earlier year's cut-off, this year's not being known yet (with the
    documents' word on when it is published), or that later ones may differ."""
    current = missing or (now.admission_year if year < now.admission_year else None)
    if current is None:
        return (
            f"Điểm chuẩn các năm sau có thể khác năm {year}: bạn chỉ nên xem đây là tham khảo."
            if language == "vi"
            else f"Later cut-offs may differ from {year}'s: take this as a guide only."
        )
    said = (
        f"Điểm chuẩn năm {current} chưa có trong dữ liệu của mình (có thể chưa được công "
        f"bố); điểm chuẩn năm {year} chỉ để bạn tham khảo."
        if language == "vi"
        else f"The {current} cut-off is not in my data (it may not be published yet); "
        f"the {year} one is a guide only."
    )
    if now.publication is not None and current == now.admission_year:
        sentence, place = now.publication
        places.append(place)
        said += f" {sentence} [{len(places)}]"
    return said


@dataclass(frozen=True)
class _Now:
    """What "now" is for one question: the admission year, and the documents' sentence on when
    its cut-offs are published (if the search found one)."""

    admission_year: int
    publication: tuple[str, Place] | None


def _year_held(
    asked: FactsQuestion, book: FactsBook, attribute: str
) -> tuple[FactsQuestion, int | None]:
    """The question as the tables can answer it: "năm nay" that no fact of ``attribute`` has
    yet is dropped (the latest year answers, and it is said that this year's is not there); a
    year named in so many words that the tables lack stays, and nothing is answered."""
    if (
        asked.year is None
        or not asked.this_year
        or any(f.attribute == attribute and f.year == asked.year for f in book.facts)
    ):
        return asked, None
    return replace(asked, year=None), asked.year


def _faq_quoted(found: Found, asked: FactsQuestion) -> bool:
    """Tier 1 weighed an entry nothing ruled out, tier 2 quotes it first (bot.answer.lookup
    ``faq_passage``) and it names the majors asked about (and the year, when one is asked: "năm
    nay" is not last year's entry): a value staff wrote an answer for is theirs to give."""
    if not found.passing or found.passing[0].faq_id is None:
        return False
    entry = fold(f"{found.passing[0].title} {found.passing[0].text}")
    if asked.year is not None and str(asked.year) not in entry:
        return False
    return all(any(key in entry for key in m.keys) for m in asked.majors)


def _programme_named(name: str, found: Found, guard: NearMissGuard) -> bool:
    """Whether a passage the search found speaks of the programme, in any of the words the
    vocabulary knows it by ("văn bằng thứ hai" is văn bằng 2): then the catalogue may just be
    missing it."""
    return any(
        name in guard.facets(f"{hit.title}\n{hit.heading_path}\n{hit.text}").get("programme", ())
        for hit in found.hits
    )


def _named_in(name: str, found: Found) -> bool:
    """Whether a passage the search found speaks of the major ``name`` ("ngành Dược"; with its
    marks when the student wrote them: "ngành Dược" is not "ngành được"), or has it as a
    heading or title; then the catalogue may just be missing it."""
    marked = not name.isascii()
    key = name.lower() if marked else fold(name)
    major = "ngành" if marked else "nganh"
    pattern = re.compile(rf"(?:\b{major} |^){re.escape(key)}(?!\w)", re.M)
    for hit in found.hits:
        for text in (hit.title, hit.heading_path.replace(" › ", "\n"), hit.text):
            if pattern.search(text.lower() if marked else fold(text)):
                return True
    return False


def closest_majors(name: str, book: FactsBook) -> list[Major]:
    key = fold(name)
    scored = sorted(
        ((difflib.SequenceMatcher(None, key, fold(m.name)).ratio(), m) for m in book.majors),
        key=lambda sm: -sm[0],
    )
    return [m for score, m in scored[:_CLOSEST] if score >= 0.5]


def _rows(
    book: FactsBook,
    major: Major,
    attribute: str,
    asked: FactsQuestion,
    on_scale_of: float | None = None,
) -> list[Fact]:
    """The facts of ``major`` for ``attribute`` that the question leaves possible, of the latest
    year that has one (or the year asked); one per programme and method."""
    rows = [
        f
        for f in book.facts
        if f.attribute == attribute
        and fold(f.major) == fold(major.name)
        and (asked.programme is None or f.programme == asked.programme)
        and (asked.method is None or f.method in (asked.method, None) or attribute == COMBINATIONS)
        and (asked.year is None or f.year == asked.year)
        and (asked.campus is None or f.campus in (asked.campus, None))
    ]
    if on_scale_of is not None:
        rows = [f for f in rows if not f.offered or f.value is None or _same_scale(on_scale_of, f)]
        if asked.method is None:
            rows = [f for f in rows if f.offered]
    if asked.method is not None and attribute != COMBINATIONS:
        exact = [f for f in rows if f.method == asked.method]
        rows = exact or rows
    if asked.campus is not None:
        rows = [f for f in rows if f.campus == asked.campus] or rows
    if not rows:
        return []
    year = max(f.year for f in rows)
    latest = [f for f in rows if f.year == year]
    if attribute == FEE and asked.per is not None:
        per = [f for f in latest if (f.unit or "").endswith(f"/{asked.per}")]
        latest = per or latest
    seen: dict[tuple[str | None, ...], Fact] = {}
    for f in latest:
        seen.setdefault((f.programme, f.method, f.unit, f.campus), f)
    # The standard programme first, each programme's methods in the table's order.
    return sorted(seen.values(), key=lambda f: (f.programme is not None, f.programme or ""))


def _named(majors: Sequence[Major]) -> list[str]:
    """The majors' names, leaving out those known only by a code (a row that gave no name)."""
    return [m.name for m in majors if not is_code(m.name)]


def _same_scale(score: float, fact: Fact) -> bool:
    """Whether a student's score can be set against a cut-off: within the scale the document
    states, else within half to twice the cut-off (an HSA 100 is no ĐGNL 900, a THPT 25 no
    SAT 1341)."""
    assert fact.value is not None
    if fact.scale is not None:
        return score <= fact.scale and (score > _TOP_SCORE) == (fact.value > _TOP_SCORE)
    return fact.value / 2 <= score <= fact.value * 2


def _rows_all(
    book: FactsBook, majors: Sequence[Major], attribute: str, asked: FactsQuestion, score: float
) -> list[Fact]:
    return [f for m in majors for f in _rows(book, m, attribute, asked, on_scale_of=score)]


def _row_label(fact: Fact, language: Language, *, method: bool = True, code: bool = False) -> str:
    name = (
        f"{fact.major} ({'mã ' if language == 'vi' else 'code '}{fact.code})"
        if code and fact.code
        else fact.major
    )
    parts = [f"Ngành {name}" if language == "vi" else name]
    if fact.programme:
        parts.append(f"chương trình {fact.programme}" if language == "vi" else fact.programme)
    if fact.method and method:
        parts.append(f"phương thức {fact.method}" if language == "vi" else fact.method)
    if fact.campus:
        parts.append(f"cơ sở {fact.campus}" if language == "vi" else f"{fact.campus} campus")
    return ", ".join(parts)


def _cell(fact: Fact) -> tuple[str | None, str | None, int, str | None]:
    """Where a major's value sits in its table: another major's in the same place compares."""
    return fact.programme, fact.method, fact.year, fact.campus


def _per(folded: str) -> str | None:
    """What the question asks a fee per ("1 năm", "mỗi học kỳ", "một tín chỉ")."""
    for word, per in _WORDS.periods.items():
        if re.search(rf"\b(?:1|mot|moi|per|a|each) {re.escape(word)}\b", folded):
            return per
    return None


def _amount(fact: Fact) -> str:
    """A fee as its table writes it, with what it is per: "32.500.000 đồng/năm"."""
    per = fact.unit.split("/", 1)[1] if fact.unit and "/" in fact.unit else ""
    return f"{fact.text}/{per}" if per and "/" not in fact.text else fact.text


def _verdict(yes: bool, fact: Fact, what: str, language: Language) -> str:
    """ "Có, ngành X xét A01 (năm 2025)" or "Không, ngành X không xét A01 (năm 2025)"."""
    label = _row_label(fact, language, method=False)
    if language == "vi":
        label = label[:1].lower() + label[1:]
        verb = "xét" if yes else "không xét"
        return f"{'Có' if yes else 'Không'}, {label} {verb} {what} (năm {fact.year})"
    verb = "takes" if yes else "does not take"
    return f"{'Yes' if yes else 'No'}, {label} {verb} {what} ({fact.year})"


def _num(value: float, language: Language = "vi") -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text.replace(".", ",") if language == "vi" else text


def _citations(places: list[Place]) -> list[Citation]:
    """One citation per document page the values come from."""
    first = {_source(p): p for p in reversed(places)}
    return [
        Citation(n=n, title=p.title, source=p.document, url=p.url, page=p.page)
        for n, p in enumerate((first[k] for k in dict.fromkeys(map(_source, places))), start=1)
    ]


def _source(place: Place) -> tuple[str, int | None]:
    return place.document, place.page


def _renumber(body: str, places: list[Place], numbers: dict[tuple[str, int | None], int]) -> str:
    """Markers [k] (the k-th place in order) as the number of that place's citation."""

    def swap(match: re.Match[str]) -> str:
        k = int(match.group(1))
        return f"[{numbers[_source(places[k - 1])]}]" if 0 < k <= len(places) else match.group(0)

    return re.sub(r"\[(\d+)\]", swap, body)
