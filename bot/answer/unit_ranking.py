"""Tier 2's units ranked for a question: each unit of the retrieved chunks scored by the
question's keyword terms it holds, weighted by how rare each is among the candidate units
(terms only its context holds, the chunk's heading path or a short label line before it, count
half), with bonuses for holding the kind of value asked, naming what the question names, its
word pairs, a listing's rows, a published FAQ answer, and a small prior for the better-ranked
chunks; a testimonial or a slogan counts less. Asked how, a procedure's steps rank as holding
what is asked and listing (``ranked_score``). Nothing is ranked when no chunk holds enough of
the question (``MIN_EVIDENCE``): tier 2 abstains."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.answer.reading import Reading, word_pairs
from bot.answer.units import Unit, with_items
from retrieval.guard.checks import NearMissGuard
from retrieval.search.hits import Hit
from retrieval.text.terms import TextProcessor

# Below this share of the question (see _evidence) the chunks passed t_doc on embedding
# similarity alone: "Thời tiết TP.HCM ngày mai thế nào?" meets admissions pages at cosine 0.8+
# through "TP.HCM" only, and quoting them would answer something else. At 0.25, 1 of the 585
# answerable questions of the UIT, demo and ALQAC sets (one whose quotes missed anyway) and 3 of
# their 12 out-of-scope ones went to the fallback; at 0.30, 9 answerable ones and 7.
MIN_EVIDENCE = 0.25
FAQ_BONUS = 0.6  # times the question's weight: the unit is a published FAQ answer's
KIND_BONUS = 0.3  # times the question's weight: the unit holds the kind of value asked
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


def ranked_units(
    terms: set[str],
    hits: Sequence[Hit],
    per_hit: Sequence[list[Unit]],
    processor: TextProcessor,
    reading: Reading,
    guard: NearMissGuard | None,
) -> tuple[list[tuple[float, Candidate]], float, float]:
    """Every unit that may be quoted, best first with its score ([] when the chunks hold too
    little of the question: ``MIN_EVIDENCE``), the question's whole weight and the evidence."""
    candidates: list[Candidate] = []
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
                Candidate(
                    hi,
                    pos,
                    own,
                    context - own,
                    agrees=about.agrees(unit.text, f"{label}\n{parent}"),
                    holds=holds_kind(guard, reading.hints, whole_text),
                    answers=holds_kind(guard, reading.kinds, whole_text),
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
                    step=reading.steps and unit.step > 0,
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
        key=lambda s: (-ranked_score(s[0], s[1], whole), s[1].hit_index, s[1].position),
    )
    return ranked, whole, evidence


@dataclass(frozen=True)
class Candidate:
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
    # Asked how, the unit is a step of a procedure: ranked as if it held what is asked and
    # listed (``ranked_score``), though its score, which tier 2's scorer weighs, is not raised.
    step: bool = False


def _score(c: Candidate, weight: Callable[[set[str]], float], whole: float, faq: bool) -> float:
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


def ranked_score(score: float, c: Candidate, whole: float) -> float:
    """What a unit is ranked by: its score, and a step asked how as if it held the kind asked
    and listed (the bonuses it has not had already)."""
    if not c.step:
        return score
    return score + whole * (KIND_BONUS * (not c.holds) + LIST_BONUS * (not c.lists))


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


def holds_kind(guard: NearMissGuard | None, kinds: frozenset[str], text: str) -> bool:
    return bool(kinds) and guard is not None and guard.holds(kinds, text)


def _evidence(
    terms: set[str],
    hits: Sequence[Hit],
    processor: TextProcessor,
    candidates: Sequence[Candidate],
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
