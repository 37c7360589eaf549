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
- Markdown is reduced to its text: links to their words, escapes and emphasis dropped.

With the same retrieved chunks, the share of document answers holding every key fact (the
answer benchmark that became `tuvan eval questions`) went from 0.34 to 0.49 on the UIT set,
0.32 to 0.58 on the demo KB and 0.78 to 0.83 on ALQAC with three quotes; four quotes (the
default) reach 0.55, 0.63 and 0.85.
Tier 2 abstains (the fallback answers) when no chunk holds enough of the question: see
``MIN_EVIDENCE``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.answer.reading import Reading, word_pairs
from bot.answer.units import Unit, passage_units, quote_text, table_names, with_items
from retrieval.guard.checks import NearMissGuard
from retrieval.search.hits import Hit
from retrieval.text.terms import TextProcessor, tokens

_SAME_CHARS = 60  # a quote this long inside one already chosen says nothing more
# Below this share of the question (see _evidence) the chunks passed t_doc on embedding
# similarity alone: "Thời tiết TP.HCM ngày mai thế nào?" meets admissions pages at cosine 0.8+
# through "TP.HCM" only, and quoting them would answer something else. At 0.25, 1 of the 585
# answerable questions of the UIT, demo and ALQAC sets (one whose quotes missed anyway) and 3 of
# their 12 out-of-scope ones went to the fallback; at 0.30, 9 answerable ones and 7.
MIN_EVIDENCE = 0.25
FAQ_BONUS = 0.6  # times the question's weight: the unit is a published FAQ answer's
FACTOID_QUOTES = 3  # at most this many units answer a question that asks no list
CLOSE = 0.7  # a factoid's later units score at least this share of the first one's
KIND_BONUS = 0.3  # times the question's weight: the unit holds the kind of value asked
MIN_LISTED = 2  # values a unit must name to answer "những ngành nào"
LIST_BONUS = 0.3  # times the question's weight: a list question, a unit that lists
PHRASE_BONUS = 0.5  # times the share of the question's word pairs the unit holds
ENTITY_BONUS = 0.15  # per entity category the unit names as the question does (two at most)
FILLER_FACTOR = 0.5  # a testimonial or a slogan
# A testimonial ("“Em đã chọn…” – Nguyễn Văn A, K2024") or a slogan: words without facts.
_FILLER = re.compile(
    r"^[\"“]|[”\"]\s*[-–—]\s*\w|\b(?:em|mình|tôi|chúng em) (?:đã|rất|thấy|cảm thấy|yêu|chọn)\b|"
    r"\b(?:tầm nhìn|sứ mạng|sứ mệnh|giá trị cốt lõi|hàng đầu|năng động|sáng tạo và|chào mừng|"
    r"vision|mission)\b",
    re.IGNORECASE,
)


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


def about_first(hits: Sequence[Hit], reading: Reading, guard: NearMissGuard | None) -> list[Hit]:
    """``hits`` in their order, those that name another value than the question (another
    year, major, method: in their title, heading path or text, and none of the question's)
    after the others."""
    if guard is None or not reading.entities:
        return list(hits)

    def other(hit: Hit) -> bool:
        named = guard.entities(f"{hit.title}\n{hit.heading_path}\n{hit.text}")
        return any(
            named.get(c) and asked.isdisjoint(named[c]) for c, asked in reading.entities.items()
        )

    return sorted(hits, key=other)


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
    ``limit``."""
    terms = set(question_terms)
    reading = reading or Reading()
    per_hit = [passage_units(hit.text) for hit in hits]
    scored, whole, evidence = _ranked(terms, hits, per_hit, processor, reading, guard)
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
    if reading.listed and guard is not None:
        # "Những ngành nào": only a unit that names some (with the items or rows it heads).
        scored = [
            s
            for s in scored
            if _names(guard, reading.listed, per_hit[s[1].hit_index], s[1].position)
        ]
        if not scored:
            return []
    lead = scored[0][0]
    most = limit if reading.listing else min(limit, FACTOID_QUOTES)

    asked = _asked_column(terms, processor, reading, guard)
    chosen: list[Quote] = []
    seen: set[str] = set()
    covered: set[tuple[int, int]] = set()
    for score, c in scored:
        if len(chosen) >= most or (not reading.listing and chosen and score < CLOSE * lead):
            break
        hi, pos = c.hit_index, c.position
        if (hi, pos) in covered:
            continue
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
        if listed is not None:
            text, used = listed
        else:
            text, used = quote_text(
                per_hit[hi],
                pos,
                hits[hi],
                covered={p for h, p in covered if h == hi},
                asked=asked,
            )
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
    return sorted(chosen, key=lambda q: (q.hit_index, q.position))


def _ranked(
    terms: set[str],
    hits: Sequence[Hit],
    per_hit: Sequence[list[Unit]],
    processor: TextProcessor,
    reading: Reading,
    guard: NearMissGuard | None,
) -> tuple[list[tuple[float, _Candidate]], float, float]:
    """Every unit that may be quoted, best first with its score ([] when the chunks hold too
    little of the question: ``MIN_EVIDENCE``), the question's whole weight and the evidence."""
    candidates: list[_Candidate] = []
    for hi, (hit, units) in enumerate(zip(hits, per_hit, strict=True)):
        heading = set(processor.query_terms(hit.heading_path)) & terms
        # What the title already says every unit of the page is about: a unit restating it
        # ("Trường thông báo tuyển sinh chương trình liên thông…") has no more of the question.
        titled = set(processor.query_terms(hit.title)) & terms
        title_pairs = word_pairs(hit.title)
        about = _About(guard, reading, f"{hit.title}\n{hit.heading_path}")
        page_says = (
            guard is not None
            and bool(reading.attributes)
            and guard.says_attribute(reading.attributes, f"{hit.title}\n{hit.heading_path}")
        )
        # Each unit read once: labels and list heads are read again for the units under them.
        held = [set(processor.query_terms(u.text)) & terms for u in units]
        pairs = [word_pairs(u.text) if reading.pairs else frozenset() for u in units]
        for pos, unit in enumerate(units):
            own = held[pos] | titled
            context = set(heading)
            label = units[unit.label].text if unit.label is not None else ""
            if unit.label is not None:
                context |= held[unit.label]
            parent = units[unit.parent].text if unit.parent is not None else ""
            if unit.parent is not None:
                context |= held[unit.parent]
            whole_text = f"{parent}\n{with_items(units, pos)}"
            candidates.append(
                _Candidate(
                    hi,
                    pos,
                    own,
                    context - own,
                    agrees=about.agrees(unit.text, f"{label}\n{parent}"),
                    holds=_holds(guard, reading.hints, whole_text),
                    answers=_holds(guard, reading.kinds, whole_text),
                    says=page_says
                    or guard is None
                    or guard.says_attribute(reading.attributes, f"{label}\n{whole_text}"),
                    filler=unit.quoted or bool(_FILLER.search(unit.text)),
                    phrase=len(
                        reading.pairs
                        & (pairs[pos] | (pairs[unit.parent] if unit.parent is not None else set()))
                        | (reading.pairs & title_pairs)
                    )
                    / len(reading.pairs)
                    if reading.pairs
                    else 0.0,
                    lists=reading.listing and (unit.row or unit.introduces),
                )
            )
    if not candidates:
        return [], 0.0, 0.0
    df: dict[str, int] = {}
    for c in candidates:
        for t in c.own | c.context:
            df[t] = df.get(t, 0) + 1
    n = len(candidates)

    def weight(found: set[str]) -> float:
        # Exactly rounded: a set's order changes with each process's string hashing, and a
        # plain float sum with it, enough to flip a unit at the CLOSE cut between two runs.
        return math.fsum(math.log(1 + n / df[t]) for t in found)

    evidence = _evidence(terms, hits, processor, candidates, df, n)
    if evidence < MIN_EVIDENCE:
        return [], 0.0, evidence
    whole = weight(set(df))  # every question term some unit holds
    ranked = sorted(
        (
            (_score(c, weight, whole, hits[c.hit_index].faq_id is not None), c)
            for c in candidates
            if c.agrees is not None
        ),
        key=lambda s: (-s[0], s[1].hit_index, s[1].position),
    )
    return ranked, whole, evidence


@dataclass(frozen=True)
class _Candidate:
    hit_index: int
    position: int
    own: set[str]  # the question's terms the unit holds
    context: set[str]  # those only its heading path or label holds
    agrees: int | None  # entity categories it names as the question does; None: it conflicts
    holds: bool  # it holds a value of a kind asked or hinted
    answers: bool  # it holds a value of a kind asked
    says: bool  # it (or its label, heading, page) says an attribute asked, or holds its kind
    filler: bool  # a testimonial, a slogan: words without facts
    phrase: float  # the share of the question's word pairs it holds
    lists: bool  # a list question, and the unit is a table row or introduces a list


def _score(c: _Candidate, weight: Callable[[set[str]], float], whole: float, faq: bool) -> float:
    score = weight(c.own) + 0.5 * weight(c.context) + 0.5 / (1 + c.hit_index)
    score += whole * (
        KIND_BONUS * c.holds
        + ENTITY_BONUS * min(c.agrees or 0, 2)
        + PHRASE_BONUS * c.phrase
        + LIST_BONUS * c.lists
    )
    if c.filler:
        score *= FILLER_FACTOR
    # A published FAQ answer among the passages (tier 1 turned it down, the guard did not) is
    # staff-approved and about what is asked: it is favoured, as much as holding the kind of
    # value asked and a listing's items together.
    return score + whole * FAQ_BONUS * faq


class _About:
    """Whether a unit is about what the question names: the values it names in the entity
    categories (or, when it names none of a category, those of its label, heading path and
    title) against the question's. None when some category names only other values."""

    def __init__(self, guard: NearMissGuard | None, reading: Reading, context: str) -> None:
        self.guard = guard if reading.entities else None
        self.asked = reading.entities
        self.context = self.guard.entities(context) if self.guard is not None else {}

    def agrees(self, text: str, label: str) -> int | None:
        if self.guard is None:
            return 0
        named = self.guard.entities(text)
        labelled = self.guard.entities(label) if label else {}
        agree = 0
        for category, asked in self.asked.items():
            values = named.get(category) or labelled.get(category) or self.context.get(category)
            if not values:
                if category in self.guard.named_by_answers:
                    return None  # another school asked: a unit must name it
                continue
            if asked.isdisjoint(values):
                return None
            agree += 1
        return agree


def _about_subjects(
    guard: NearMissGuard | None, reading: Reading, units: list[Unit], pos: int, hit: Hit
) -> bool:
    """Whether the unit (with its label, parent, heading and page title) names a value of each
    subject category the question names."""
    if guard is None or not reading.subjects:
        return True
    unit = units[pos]
    around = [units[i].text for i in (unit.label, unit.parent) if i is not None]
    named = guard.facets("\n".join([unit.text, *around, hit.heading_path, hit.title]))
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


def _holds(guard: NearMissGuard | None, kinds: frozenset[str], text: str) -> bool:
    return bool(kinds) and guard is not None and guard.holds(kinds, text)


def _asked_column(
    terms: set[str], processor: TextProcessor, reading: Reading, guard: NearMissGuard | None
) -> Callable[[str, str], bool]:
    """Whether a table column is what the question asks: its header holds a question term,
    or its cell the kind of value asked."""

    def asked(header: str, cell: str) -> bool:
        if set(processor.query_terms(header)) & terms:
            return True
        return _holds(guard, reading.hints, cell)

    return asked


def _evidence(
    terms: set[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    candidates: Sequence[_Candidate],
    df: dict[str, int],
    n: int,
) -> float:
    """How much of the question the best chunk holds: the rarity-weighted share of the question's
    terms found in its text, heading path or title (a term no unit holds weighs the most)."""

    def weight(t: str) -> float:
        return math.log(1 + n / df[t]) if t in df else math.log(1 + n)

    total = math.fsum(weight(t) for t in terms)
    if not total:
        return 0.0
    found: list[set[str]] = [set(processor.query_terms(hit.title)) & terms for hit in hits]
    for c in candidates:
        found[c.hit_index] |= c.own | c.context
    return max(math.fsum(weight(t) for t in f) / total for f in found)


def render_quotes(quotes: Sequence[Quote]) -> str:
    return "\n".join(f"- {q.text} [{q.source_n}]" for q in quotes)
