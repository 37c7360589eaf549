"""A message read once (1/4): made when it comes in and handed to every step after, none of which
reads the message again.

``read_message`` reads what needs no knowledge: the small talk it is (bot.answer.small_talk) or
the question it asks less an opener in front, and its language. The conversation step adds what
the message names by itself (``with_alone``: bot.answer.standalone). Once the knowledge store is
open, ``with_restored`` adds what the search made of the question (its marks put back, its
shorthand written out, its parts) and what the school's vocabulary reads in it: the kinds of
value asked, the attribute, whom or what it is about (school, major, programme, method, campus,
year, ordinal…), each value with the student's words that said it (``said``). Tier 1, the facts
tables and tier 2 take that reading; a question of several parts holds each part's reading.

Why two steps: the school's vocabulary (its catalogue's majors and campuses, bot.answer.parts)
and the restorer are read from the knowledge store, which the conversation step does not open.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bot.answer.question import clean_question
from bot.answer.reading import Reading, read_question
from bot.answer.small_talk import Kind, small_talk, without_opener
from bot.answer.standalone import NOT_A_TOPIC, Alone, topic_of
from bot.core.types import Language
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets
from retrieval.query import OPENS_WITH_VERB, PreparedQuery
from retrieval.text.folding import fold
from retrieval.text.language import detect_language
from retrieval.text.pack import alternatives, load_pack
from retrieval.text.terms import TextProcessor

_SUBJECTS = frozenset(load_pack().follow_up.subjects)  # what a question can be about
_OF_THE_SCHOOL = load_pack().follow_up.of_the_school
# A part that asks something: a question mark or a question word, or an English verb opening it
# (retrieval.query.OPENS_WITH_VERB). "Mình đã tốt nghiệp cao đẳng và muốn học liên thông" only
# says who asks; it is read with the next part.
_ASKS = re.compile(rf"\?|\b{alternatives(load_pack().questions.part_asks)}\b")
_PUNCTUATION = "?!.,;:…\"'()"


@dataclass(frozen=True)
class Said:
    """A value the question names, and the student's words that said it."""

    category: str
    label: str  # the category in staff's words ("ngành")
    value: str
    words: str


@dataclass(frozen=True)
class PartRead:
    """One part of a question that asks several things (one that asks nothing is read with
    the part after it)."""

    text: str  # as typed (restored)
    dense: str  # written out: what is embedded
    own: Reading  # its own words: what it asks, for its heading
    reading: Reading  # with the names the whole question gives it: the units quoted for it


@dataclass(frozen=True)
class Read:
    """A message as read, once."""

    text: str  # as it came in
    question: str  # cleaned, less an opener in front of it
    language: Language
    kind: Kind | None = None  # the small talk it is; None for a question
    alone: Alone | None = None  # what it names by itself, when the conversation step asked
    # What the search and the school's vocabulary made of it (``with_restored``).
    restored: str | None = None
    dense: str = ""  # restored, shorthand written out
    asks: Reading | None = None  # what it asks, as the dense side reads it
    typed: Facets = field(default_factory=dict)  # the values it names as typed
    said: tuple[Said, ...] = ()
    parts: tuple[PartRead, ...] = ()  # two or more for a question of several parts
    guarded: bool = True  # False: TUVAN_ANSWER__NEAR_MISS_GUARD is off for tier 2

    @property
    def answering(self) -> Reading:
        """What tier 2 reads the question to ask (the guard's words only when it is on)."""
        if self.asks is None:
            return Reading()
        return self.asks if self.guarded else self.asks.without_guard()

    def with_alone(self, alone: Alone) -> Read:
        return replace(self, alone=alone)

    def with_restored(
        self,
        prepared: PreparedQuery,
        guard: NearMissGuard,
        processor: TextProcessor,
        *,
        guarded: bool = True,
    ) -> Read:
        """This reading with what ``prepared`` (``prepare_query`` of ``question``) made of the
        question, read by ``guard``, the school's vocabulary."""
        # What the conversation step read already, with the same vocabulary, is not read again.
        known = (self.alone.typed, self.alone.written) if self.alone is not None else ()
        asks = _known(prepared.dense, guard, known) or read_question(
            prepared.dense, guard, processor
        )
        typed = _known(prepared.question, guard, (asks, *known))
        in_use = guard if guarded else None
        return replace(
            self,
            restored=prepared.restored,
            dense=prepared.dense,
            asks=asks,
            typed=typed.facets if typed is not None else guard.facets(prepared.question),
            said=_said(asks, prepared, guard),
            parts=_parts(prepared, asks, in_use, processor),
            guarded=guarded,
        )


def read_message(text: str) -> Read:
    """``text`` as it comes in: its kind of small talk, or its question without an opener."""
    message = clean_question(text)
    kind = small_talk(message)
    question = message if kind is not None else without_opener(message)
    return Read(text, question, detect_language(question), kind)


def read_asked(text: str) -> Read:
    """A question the conversation step wrote with what it took from earlier ones."""
    question = clean_question(text)
    return Read(text, question, detect_language(question))


def _known(text: str, guard: NearMissGuard, known: tuple[Reading, ...]) -> Reading | None:
    """The reading of ``text`` by ``guard`` among ``known``, if it read it already."""
    return next((r for r in known if r.text == text and r.vocabulary == id(guard)), None)


# -- the words that said each value -------------------------------------------------------


def _said(asks: Reading, prepared: PreparedQuery, guard: NearMissGuard) -> tuple[Said, ...]:
    """Each value ``asks`` reads, with the words of the question as typed that said it: back
    through the shorthand written out, then through the marks put back (one word for one)."""
    readable = prepared.readable
    typed = prepared.question.split()
    by_word = prepared.restored is not None and len(readable.split()) == len(typed)
    out: dict[tuple[str, str, str], Said] = {}
    for span in asks.spans:
        start, end = (
            prepared.written.source_of(span.start, span.end)
            if prepared.written is not None
            else (span.start, span.end)
        )
        words = readable[start:end]
        if by_word:
            first = len(readable[:start].split())
            words = " ".join(typed[first : first + len(words.split())])
        words = words.strip(_PUNCTUATION)
        key = (span.category, span.value, words)
        if words and key not in out:
            out[key] = Said(span.category, guard.label(span.category), span.value, words)
    return tuple(out.values())


# -- the parts of a question that asks several things -------------------------------------


def _parts(
    prepared: PreparedQuery,
    whole: Reading,
    guard: NearMissGuard | None,
    processor: TextProcessor,
) -> tuple[PartRead, ...]:
    if len(prepared.parts) < 2:
        return ()
    out: list[PartRead] = []

    def says(text: str) -> bool:
        return guard is None or bool(read_question(text, guard, processor).facets)

    for text, dense in asking_parts([(p.text, p.dense) for p in prepared.parts], says):
        own = read_question(dense, guard, processor)
        named = with_entities(dense, own, prepared.dense, whole, guard)
        if named == dense and out and guard is not None and not set(own.facets) - NOT_A_TOPIC:
            # It names nothing and nothing was carried ("mấy giờ mở cửa" after "phòng tuyển
            # sinh ở đâu"): the part before it is what it asks about, as a message after a
            # question (bot.answer.followup).
            topic = topic_of(out[-1].dense, guard, processor)
            if topic and fold(topic) not in fold(dense):
                named = f"{topic}: {dense}"
        reading = own if named == dense else read_question(named, guard, processor)
        if own.kinds and reading is not own:
            # What it asks is in its own words: "học phí" taken into "hạn chót phải đóng là
            # ngày nào" says whose deadline, and asks no amount.
            reading = replace(reading, kinds=own.kinds, hints=own.hints)
        out.append(PartRead(text, dense, own, reading))
    return tuple(out)


def asking_parts(
    parts: list[tuple[str, str]], says: Callable[[str], bool] | None = None
) -> list[tuple[str, str]]:
    """``parts`` with each one that asks nothing read with the part after it (or, at the end,
    the part before it); all of them when none asks. With ``says``, a part that asks nothing
    is kept only when it says something (a major, a score): "I'm a Korean student finishing
    high school in HCMC." would count as words of the question the deadline must hold."""
    out: list[tuple[str, str]] = []
    context = ""
    for label, dense in parts:
        dense = f"{context} {dense}" if context else dense
        if _ASKS.search(folded := fold(label)) or OPENS_WITH_VERB.match(folded):
            out.append((label, dense))
            context = ""
        elif says is None or says(dense):
            context = dense
    if not out:
        return parts
    if context:
        out[-1] = (out[-1][0], f"{out[-1][1]} {context}")
    return out


def with_entities(
    part: str, mine: Reading, whole: str, theirs: Reading, guard: NearMissGuard | None
) -> str:
    """``part`` (read: ``mine``) with the names ``whole`` (read: ``theirs``) gives in the
    categories the part names none of (not a year: in "điểm chuẩn 2025 bao nhiêu, năm nay
    tuyển mấy chỉ tiêu" the quota is this year's), its subject (a scholarship, a topic) and
    the other parts' topic when it names none."""
    if guard is None:
        return part
    named = mine.facets
    own = named.get("attribute", frozenset())
    if own and {fold(a) for a in own} <= _OF_THE_SCHOOL:
        return part  # "mã trường là gì" asks of no major another part names
    carried = set(theirs.entities) - set(mine.entities) - {"year"}
    # The subject the part leaves out ("có mấy loại" after "trường có học bổng … không").
    carried |= {c for c in theirs.facets if c in _SUBJECTS and c not in named}
    # "khi nào mở đăng ký" after "ktx …": the dormitory's. "hạn chót phải đóng là ngày nào"
    # after "học phí … bao nhiêu": the fee's deadline (its attributes say only when or where).
    when_or_where = (
        all(_circumstance(guard, a) for a in own)
        if own
        # "phải đóng trước ngày nào" names nothing and asks only when
        else bool(mine.kinds) and mine.kinds <= _CIRCUMSTANCES
    )
    if not own or when_or_where:
        carried.add("attribute")
    words = whole.split()
    # An attribute is the subject of the parts after it: "tiền phòng đóng theo tháng hay theo
    # kỳ, có phải đặt cọc không" asks no deposit in its first part.
    at = whole.find(part)
    before = len(whole[:at].split()) if at >= 0 else len(words)
    extra = [
        said
        for start, end, category in guard.entity_spans(whole)
        if category in carried
        and (said := " ".join(words[start:end])) not in part
        # Only a subject is taken from a part after it: "ielts 6.5 quy đổi được mấy điểm, hạn
        # nộp học bạ là ngày nào" asks no conversion for the method học bạ.
        and (category in _SUBJECTS or end <= before)
        # Not what another part asks ("ở đâu"): "mấy giờ mở cửa" asks no place. Into a part
        # saying when or where, an attribute that is a subject as well ("học phí") is carried,
        # not one that only asks ("bao nhiêu tiền") or says another circumstance ("hạn nộp").
        and not (
            category == "attribute"
            and (_asks_only(guard, said) if when_or_where else guard.asked_kinds(said))
        )
    ]
    return " ".join([part, *dict.fromkeys(extra)])


# The kinds of value that say only when or where something is: an attribute of those alone (hạn
# nộp, địa điểm) is a circumstance of what another names (học phí, hồ sơ), not a subject.
_CIRCUMSTANCES = frozenset({"date", "time", "period", "address"})


def _circumstance(guard: NearMissGuard, attribute: str) -> bool:
    kinds = guard.kinds_of({"attribute": frozenset({attribute})})
    return bool(kinds) and kinds <= _CIRCUMSTANCES


def _asks_only(guard: NearMissGuard, words: str) -> bool:
    """Whether ``words`` (an attribute's) only ask a kind of value ("bao nhiêu tiền") or say a
    circumstance ("ở đâu", "hạn nộp"): nothing another part is about."""
    facets = guard.facets(words)
    named = facets.get("attribute", frozenset())
    if named and all(_circumstance(guard, a) for a in named):
        return True
    return bool(guard.asked_kinds(words)) and not guard.attributes_of(facets)
