"""The facts tier: which kind of answer the tables give a question, or None to leave it to
tier 2; the search's passages say when an FAQ entry or the documents should speak instead."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from bot.answer.facts.catalogue import (
    all_majors,
    comparison,
    extreme,
    has_major,
    majors_taking,
    no_such_major,
    no_such_programme,
)
from bot.answer.facts.citing import FactsReply, cited, joined
from bot.answer.facts.question import (
    OFFER_PROGRAMME,
    SCORE_CHECK,
    STANDARD_ASKED,
    TABLE_ATTRIBUTES,
    FactsQuestion,
    compares,
    offered_name,
    read_facts_question,
)
from bot.answer.facts.values import Now, score_check, values, whether
from bot.answer.found import Found, Timer
from bot.answer.parts import AnswererParts
from bot.answer.read import PartRead, Read
from bot.answer.replies import Answer
from retrieval.facts.book import FactsBook
from retrieval.facts.model import COMBINATIONS, CUTOFF, QUOTA
from retrieval.guard.checks import NearMissGuard
from retrieval.text.folding import fold
from retrieval.text.pack import load_pack
from retrieval.text.terms import TextProcessor

_EVERY_MAJOR = load_pack().facts.every_major
# What a part must name in its own words for the tables to answer it (or compare: "so với hệ
# chuẩn thì mắc hơn bao nhiêu"): what it asks, the combination or method it asks whether, or a
# score. "có tuyển đủ không" after "chỉ tiêu năm ngoái bao nhiêu" asks no quota of its own.
_ASKED_OF_TABLES = frozenset({"attribute", "combination", "method", "number"})
_MIN_MAJORS = 3  # a catalogue naming fewer majors is not the school's list: no "no" from it
today = date.today  # the day "năm nay" is read on (a test may hold it still)


class FactsTier:
    """Answers from the facts tables, or None to leave the question to tier 2."""

    def __init__(self, parts: AnswererParts) -> None:
        self.parts = parts
        self.settings = parts.settings

    async def answer(self, found: Found, timer: Timer) -> Answer | None:
        book = found.facts
        if book is None or not book.majors or found.decision.accepted is not None:
            return None
        read = found.read
        if read is None or self._about_another_school(read):
            return None
        with timer.stage("facts"):
            reply = self.by_part(read, found, book)
            if reply is None and not found.facts_parts:
                reply = self.decide(read, found, book)
        return None if reply is None else cited(reply, found.language, self.settings.answer)

    def by_part(self, read: Read, found: Found, book: FactsBook) -> FactsReply | None:
        """A question of several parts, each part decided alone, read with the names the other
        parts give it (``Read.parts``: "điểm chuẩn ngành TTNT 2025 bao nhiêu, năm nay tuyển
        mấy chỉ tiêu" asks the quota of TTNT too). Every part the tables answer: the replies
        joined. Some: those replies are left on ``found.facts_parts`` for tier 2, which quotes
        the documents for the other parts only; a score check does not answer the fee asked
        after it ("e được 25đ có đỗ CNTT không, học phí 1 năm bao nhiêu"). None: the whole
        question is decided as one."""
        if len(read.parts) < 2:
            return None
        replies = [
            self._part_reply(self._part_read(read, part), found, book)
            if set(part.own.facets) & _ASKED_OF_TABLES or compares(part.text)
            else None
            for part in read.parts
        ]
        if all(replies):
            return joined([r for r in replies if r is not None])
        if any(replies):
            found.facts_parts = tuple(replies)
        return None

    def _part_reply(self, read: Read, found: Found, book: FactsBook) -> FactsReply | None:
        """One part's reply from the tables, only about the majors it names (or the other
        parts give it): a part read alone answers nothing across the catalogue ("có xét học bạ
        không" naming no major is no list of the majors taking a combination)."""
        asked, _ = self._asked(read, book)
        return self.decide(read, found, book, part=True) if asked.majors else None

    def _part_read(self, read: Read, part: PartRead) -> Read:
        reading = part.reading
        return replace(
            read,
            text=part.text,
            question=reading.text,
            dense=reading.text,
            asks=reading,
            typed=self.parts.guard.facets(part.text),
            parts=(),
        )

    def _asked(self, read: Read, book: FactsBook) -> tuple[FactsQuestion, int]:
        """What the question asks of the tables ("năm nay" read as the admission year), and
        that year."""
        asked = read_facts_question(read, book)
        year = book.admission_year(self.settings.answer.admission_year, today())
        if asked.this_year and asked.year is None:
            asked = replace(asked, year=year)
        return asked, year

    def _about_another_school(self, read: Read) -> bool:
        """The question names a school that is not this one: its tables do not answer it."""
        if "institution" not in read.typed:
            return False
        folded = fold(read.question)
        return not any(fold(n) in folded for n in self.settings.brand.own_names if n.strip())

    def decide(
        self, read: Read, found: Found, book: FactsBook, *, part: bool = False
    ) -> FactsReply | None:
        """The tables' reply to the question as one (``part``: to one part of it), or None to
        leave it to tier 2."""
        guard = self.parts.guard
        question = read.question
        asked, year = self._asked(read, book)
        language = found.language
        now = Now(year, book.publications.get(year))
        if not asked.majors and asked.score is None:
            if asked.which and asked.combination and asked.attribute in (None, COMBINATIONS):
                return majors_taking(asked.combination, book, language)
            if asked.which and asked.extreme and asked.attribute in (CUTOFF, QUOTA):
                return extreme(asked, book, language)
            if _every_major(asked, read, self.parts.processor):  # "trường có những ngành nào"
                return all_majors(book, language)
        comparing = (asked.compare is not None or asked.which) and asked.score is None
        if len(asked.majors) >= 2 and asked.attribute in (CUTOFF, QUOTA) and comparing:
            return comparison(asked, book, language)
        if (
            asked.programme is not None
            and asked.whether
            and OFFER_PROGRAMME.search(fold(question))
            and len(book.majors) >= _MIN_MAJORS
            and fold(asked.programme) not in map(fold, book.programmes)
            and not _programme_named(asked.programme, found, guard)
        ):
            return no_such_programme(asked.programme, book, language)
        if not asked.majors:
            missing = offered_name(question)
            if missing is None or len(book.majors) < _MIN_MAJORS:
                return None
            if _named_in(missing, found):
                return None  # the documents name it: not ours to deny
            return no_such_major(missing, book, language)
        # as typed: "attt" written out is "an toàn thông tin", and "an toàn" checks a score
        if asked.score is not None and SCORE_CHECK.search(fold(read.text)):
            return score_check(asked, book, language, now)
        if asked.whether and (asked.combination or asked.method) and asked.score is None:
            reply = whether(asked, book, language)
            # "còn xét học bạ thì lấy bao nhiêu điểm": the cut-off, when no table says whether
            if reply is not None or asked.attribute not in TABLE_ATTRIBUTES:
                return reply
        if asked.beyond:
            return None  # part of it is for the documents: tier 2 answers the whole
        if asked.attribute in TABLE_ATTRIBUTES and asked.score is None:
            if not part and _faq_quoted(found, asked):
                # an FAQ entry staff wrote about it is quoted by tier 2 first; not for a part:
                # the passage tier 2 quotes first is the whole message's, not the part's
                return None
            return values(asked, book, language)
        if offered_name(question) is not None and asked.attribute is None:
            standard = bool(STANDARD_ASKED.search(fold(question)))
            return has_major(asked, standard, book, language)
        return None


def _every_major(asked: FactsQuestion, read: Read, processor: TextProcessor) -> bool:
    """A list of the majors asked and nothing about them: no attribute, programme, method,
    combination or campus, and no word but the language pack's `every_major` ("những ngành
    nào dễ xin việc" asks about some of them)."""
    if read.asks is None or read.asks.listed != "major" or asked.attribute is not None:
        return False
    if any((asked.programme, asked.method, asked.combination, asked.campus, asked.extreme)):
        return False
    return {t for t in processor.query_terms(read.question) if "_" not in t} <= _EVERY_MAJOR


def _faq_quoted(found: Found, asked: FactsQuestion) -> bool:
    """Tier 1 weighed an entry nothing ruled out, tier 2 quotes it first (bot.answer.lookup
    ``faq_passage``) and it names the majors asked about (and the year, when one is asked: "năm
    nay" is not last year's entry): a value staff wrote an answer for is theirs to give."""
    if not found.passing or found.passing[0].faq_id is None:
        return False
    if asked.standard and asked.programme is not None:
        return False  # two programmes compared: the tables hold both
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
