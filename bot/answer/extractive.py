"""Tier 2 without an LLM: quote the pieces of the retrieved chunks that best fit the question.

Nothing is generated: every quote is made of verbatim pieces of a chunk, tagged with the number
of its source. The units quoted are sentences, list items and table rows:

- a table row is quoted with its column headers ("Ngành học: Kỹ thuật phần mềm; Chỉ tiêu: 240"),
  so that a number says what it is and a question naming a column ("chỉ tiêu") finds its rows;
  a row-number column (STT) is left out, and the section heading leads the row ("2023 — …");
- a unit is scored by the question's keyword terms it contains, weighted by how rare each term is
  among the candidate units; terms only its context holds (the chunk's heading path, or a short
  label line just before it, such as "II. CHỈ TIÊU TUYỂN SINH" over "30 chỉ tiêu.") count half,
  and the label is quoted with it; a small prior favours the better-ranked chunks;
- a quoted unit that ends with ":" brings the list items, rows or "field: value" lines after it;
  a question asking how to do something, answered by a step of a numbered list, gets the whole
  list from its first step (``bot.answer.steps``);
- Markdown is reduced to its text: links to their words, escapes and emphasis dropped.

With the same retrieved chunks, the share of document answers holding every key fact (the
answer benchmark that became `tuvan eval questions`) went from 0.34 to 0.49 on the UIT set,
0.32 to 0.58 on the demo KB and 0.78 to 0.83 on ALQAC with three quotes; four quotes (the
default) reach 0.55, 0.63 and 0.85.
Tier 2 abstains (the fallback answers) when no chunk holds enough of the question: see
``MIN_EVIDENCE``. The units are ranked in ``bot.answer.unit_ranking``; this module chooses and
quotes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from bot.answer.reading import Reading, names_period
from bot.answer.steps import quote_steps
from bot.answer.unit_ranking import Candidate, holds_kind, ranked_score, ranked_units
from bot.answer.units import Unit, passage_units, quote_text, table_names, with_items
from retrieval.guard.checks import NearMissGuard
from retrieval.guard.verdicts import Facets
from retrieval.search.hits import Hit
from retrieval.text.terms import TextProcessor, tokens, written_marks

_SAME_CHARS = 60  # a quote this long inside one already chosen says nothing more
FACTOID_QUOTES = 3  # at most this many units answer a question that asks no list
CLOSE = 0.7  # a factoid's later units score at least this share of the first one's
MIN_LISTED = 2  # values a unit must name to answer "những ngành nào"


@dataclass(frozen=True)
class Quote:
    source_n: int  # the citation number of the hit it comes from
    hit_index: int
    position: int
    text: str
    score: float
    # What tier 2's scorer weighs (bot.answer.confidence): the score as a share of the
    # question's weight, how much of the question the best passage holds, whether the unit
    # holds the kind of value asked, how many of the question's names it agrees with.
    share: float = 0.0
    evidence: float = 0.0
    holds: bool = False
    agrees: int = 0


def about_first(
    hits: Sequence[Hit],
    reading: Reading,
    guard: NearMissGuard | None,
    parts: Sequence[Reading] = (),
    whole: Sequence[str] = (),
) -> list[Hit]:
    """``hits`` in their order, those that name another value than the question (another
    year, major, method: in their title, heading path or text, and none of the question's)
    after the others. A question of several ``parts``: another value than every part's (in
    "ielts 6.5 quy đổi được mấy điểm, hạn nộp học bạ ngày nào" the conversion table of the
    method PT2 is about the first part, though the second names học bạ), or than the whole
    question's in the categories of ``whole`` (a year: a passage about another year than the
    one asked is dropped later, whichever part asked it). A passage whose title or heading
    names a programme goes after too when the question names none: "xét học bạ ngành khdl điều
    kiện tối thiểu bao nhiêu" asks the regular programme's condition, not văn bằng 2's."""
    if guard is None or not reading.entities:
        return list(hits)

    def names_other(named: Facets, entities: Facets, categories: Iterable[str]) -> bool:
        return any(
            named.get(c) and entities[c].isdisjoint(named[c]) for c in categories if c in entities
        )

    no_programme = "programme" not in reading.entities

    def other(hit: Hit) -> bool:
        if no_programme and "programme" in guard.entities(f"{hit.title}\n{hit.heading_path}"):
            return True  # a question naming no programme asks of the regular one
        named = guard.entities(f"{hit.title}\n{hit.heading_path}\n{hit.text}")
        if not parts:
            return names_other(named, reading.entities, reading.entities)
        return names_other(named, reading.entities, whole) or all(
            names_other(named, r.entities, r.entities) for r in parts
        )

    return sorted(hits, key=other)


def naming_what_is_asked(
    hits: Sequence[Hit], reading: Reading, guard: NearMissGuard | None, keep: int
) -> list[Hit]:
    """``hits``, of which the first ``keep`` are quoted from: when none of those names an
    attribute the question asks ("lương khởi điểm") and a later one does, that one takes the
    last place kept (the page about majors' quotas outranked the salary table for "ngành ktpm
    lương khởi điểm bn")."""
    if guard is None or not reading.attributes or len(hits) <= keep:
        return list(hits)

    def names(hit: Hit) -> bool:
        said = guard.facets(f"{hit.title}\n{hit.heading_path}\n{hit.text}").get("attribute")
        return bool(said and reading.attributes & said)

    if any(names(h) for h in hits[:keep]):
        return list(hits)
    later = next((n for n in range(keep, len(hits)) if names(hits[n])), None)
    if later is None:
        return list(hits)
    return [*hits[: keep - 1], hits[later], *hits[keep - 1 : later], *hits[later + 1 :]]


def select_quotes(
    question_terms: Sequence[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    *,
    limit: int,
    reading: Reading | None = None,
    guard: NearMissGuard | None = None,
) -> list[Quote]:
    """The best units of ``hits`` for the question, in reading order; [] to abstain.

    With a ``reading`` (3/6), a unit that names another value than the question in one of the
    entity categories (another major, year, method) is never quoted; a unit holding the kind of
    value asked leads, and when none does the answer abstains; a factoid gets at most
    ``FACTOID_QUOTES`` units, each close to the best one's score; a list question up to
    ``limit``; a yes-no question's answer abstains unless a unit quoted says what it asks
    whether (``Reading.whether``)."""
    terms = set(question_terms)
    reading = reading or Reading()
    per_hit = [passage_units(hit.text) for hit in hits]
    scored, whole, evidence = ranked_units(terms, hits, per_hit, processor, reading, guard)
    if not scored:
        return []  # too little of the question, or every unit about another major, year...
    if reading.kinds and guard is not None:
        # Asked for a phone number, an amount, a date...: only units holding one answer, and
        # when none does, no answer beats a wrong one.
        scored = [s for s in scored if s[1].answers]
        if not scored:
            return []
    if reading.attributes and guard is not None:
        # Asked a cut-off, a quota, a fee…: only a unit that says it (or its page or heading
        # does) answers; a real line about the quota is no answer to a cut-off question (1/4).
        scored = [s for s in scored if s[1].says]
        if not scored:
            return []
    if reading.per:
        # "hp 1 kỳ bn": only a unit naming the period, itself or by its label (a table's
        # column "Học phí mỗi học kỳ"); "36.000.000 đồng/năm" is no answer to it.
        scored = [s for s in scored if _per_period(reading, per_hit[s[1].hit_index], s[1].position)]
        if not scored:
            return []
    if reading.listed and guard is not None:
        # "Những ngành nào": only a unit that names some (with the items or rows it heads).
        scored = [
            s
            for s in scored
            if _names(guard, reading.listed, per_hit[s[1].hit_index], s[1].position)
        ]
        if not scored:
            return []
    lead = ranked_score(scored[0][0], scored[0][1], whole)
    most = limit if reading.listing else min(limit, FACTOID_QUOTES)

    asked = _asked_column(terms, processor, reading, guard)
    chosen: list[Quote] = []
    picked: list[Candidate] = []
    seen: set[str] = set()
    covered: set[tuple[int, int]] = set()
    steps_quoted = False
    for score, c in scored:
        hi, pos = c.hit_index, c.position
        if (hi, pos) in covered or (steps_quoted and c.step):
            continue  # quoted already; asked how, one procedure answers, not a second list
        rank = ranked_score(score, c, whole)
        if len(chosen) >= most or (not reading.listing and chosen and rank < CLOSE * lead):
            break
        if (
            reading.listing
            and chosen
            and not _about_subjects(guard, reading, per_hit[hi], pos, hits[hi])
        ):
            # A list answer quotes several units; past the lead, each must be about what the
            # question is about ("học bổng"), itself or by its label, heading or page: not
            # a table of room prices that shares a word with it.
            continue
        listed = None
        if reading.listing and per_hit[hi][pos].row:
            listed = table_names(per_hit[hi], pos, hits[hi])
            if not _lists(guard, reading.listed, listed[0]):
                listed = None  # the table's names are not what is listed: quote the row
        mine = {p for h, p in covered if h == hi}
        if listed is None and c.step:
            listed = quote_steps(per_hit[hi], pos, mine)  # "cách đăng ký ntn": every step
            steps_quoted = listed is not None
        if listed is not None:
            text, used = listed
        else:
            text, used = quote_text(per_hit[hi], pos, hits[hi], covered=mine, asked=asked)
        key = " ".join(tokens(text))
        if any(key == s or (len(key) > _SAME_CHARS and key in s) for s in seen):
            continue  # the same passage in two documents (near-duplicate pages)
        seen.add(key)
        covered.update((hi, p) for p in used)
        chosen.append(
            Quote(
                hi + 1,
                hi,
                pos,
                text,
                score,
                score / whole if whole else 0.0,
                evidence,
                c.answers or c.holds,
                c.agrees or 0,
            )
        )
        picked.append(c)
    if not _says_whether(reading, processor, picked, per_hit, hits):
        return []  # "ktx có cho nuôi mèo không" quoted with the dorms' capacity: no answer
    return sorted(chosen, key=lambda q: (q.hit_index, q.position))


def _says_whether(
    reading: Reading,
    processor: TextProcessor,
    picked: Sequence[Candidate],
    per_hit: Sequence[list[Unit]],
    hits: Sequence[Hit],
) -> bool:
    """Whether the units chosen (with their context) hold a word of what a yes-no
    question asks whether ("nuôi", "mèo" of "ktx có cho nuôi mèo không"); true for any other
    question. A question written with its marks is held only by a word written alike: "máy chủ"
    is not "mấy", "vận động viên" not "đồng" (folded, they are one word)."""
    asked = {t for phrase in reading.whether for t in processor.query_terms(phrase)}
    if not asked:
        return True
    mine = written_marks(reading.text) if not reading.text.isascii() else {}
    for c in picked:
        held = asked & (c.own | c.context)
        theirs = {}
        if held and mine:
            theirs = written_marks(
                _with_context(per_hit[c.hit_index], c.position, hits[c.hit_index])
            )
        if any(_written_alike(term, mine, theirs) for term in held):
            return True
    return False


def _written_alike(
    term: str, mine: dict[str, frozenset[str]], theirs: dict[str, frozenset[str]]
) -> bool:
    """Whether each word of ``term`` ("may", "may_chu") is written in the unit with marks it has
    in the question; a word either writes without marks, or whose forms are unknown, agrees."""
    for word in term.split("_"):
        asked, there = mine.get(word), theirs.get(word)
        if asked and there and "" not in asked and "" not in there and not asked & there:
            return False
    return True


def _per_period(reading: Reading, units: list[Unit], pos: int) -> bool:
    return names_period(reading.per, _with_label(units, pos))


def _with_label(units: list[Unit], pos: int) -> str:
    """A unit's text with its label (a table's column, a list's head) and parent."""
    unit = units[pos]
    return "\n".join(units[i].text for i in (pos, unit.label, unit.parent) if i is not None)


def _with_context(units: list[Unit], pos: int, hit: Hit) -> str:
    """A unit's text with its label, parent, heading path and page title."""
    return "\n".join([_with_label(units, pos), hit.heading_path, hit.title])


def _about_subjects(
    guard: NearMissGuard | None, reading: Reading, units: list[Unit], pos: int, hit: Hit
) -> bool:
    """Whether the unit (with its label, parent, heading and page title) names a value of each
    subject category the question names."""
    if guard is None or not reading.subjects:
        return True
    named = guard.facets(_with_context(units, pos, hit))
    return all(
        values & named.get(category, frozenset()) for category, values in reading.subjects.items()
    )


def _lists(guard: NearMissGuard | None, category: str | None, names: str) -> bool:
    """Whether a table's names are the values a list question asks for: "những ngành nào" is
    answered by the majors a table names, "ngành X xét những tổ hợp nào" by the row of X."""
    if category is None or guard is None:
        return True
    return len(guard.facets(names).get(category, ())) >= MIN_LISTED


def _names(guard: NearMissGuard, category: str, units: list[Unit], pos: int) -> bool:
    """Whether the unit, with the items it introduces or the rest of its table, names two
    values of ``category`` or more."""
    unit = units[pos]
    text = (
        "\n".join(u.text for u in units if u.table == unit.table)
        if unit.row
        else with_items(units, pos)
    )
    return len(guard.facets(text).get(category, ())) >= MIN_LISTED


def _asked_column(
    terms: set[str], processor: TextProcessor, reading: Reading, guard: NearMissGuard | None
) -> Callable[[str, str], bool]:
    """Whether a table column is what the question asks: its header holds a question term,
    or its cell the kind of value asked; asked a figure per semester, only the column naming
    the period ("Học phí mỗi học kỳ", not "Học phí/năm")."""

    def asked(header: str, cell: str) -> bool:
        if reading.per:
            return names_period(reading.per, header)
        if set(processor.query_terms(header)) & terms:
            return True
        return holds_kind(guard, reading.hints, cell)

    return asked


def render_quotes(quotes: Sequence[Quote]) -> str:
    return "\n".join(f"- {q.text} [{q.source_n}]" for q in quotes)
