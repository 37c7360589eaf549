"""Tier 2: an answer from the documents' passages, each fact cited by number.

With an LLM, its answer is kept only if every citation names a passage it was given; without
one (or when the LLM fails), the passages' best units are quoted (bot.answer.extractive). A
question of several parts is answered part by part. When no quoted unit holds what is asked,
the tier declines and the fallback offers the passages as links (``abstained``).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from bot.answer import replies
from bot.answer.confidence import documents_confidence, documents_features
from bot.answer.extractive import Quote, render_quotes, select_quotes
from bot.answer.facts.citing import cited_after
from bot.answer.found import Found, Timer, hit_citation
from bot.answer.llm_answer import Generated, generate_answer
from bot.answer.parts import AnswererParts
from bot.answer.question_parts import answered_by, part_labels, what_is_missing
from bot.answer.read import PartRead
from bot.answer.reading import Reading
from bot.answer.replies import Answer
from bot.answer.why import Composed, documents_answered
from bot.core.citations import MARKER, Citation
from bot.core.errors import LlmError
from bot.core.types import Language
from retrieval.guard.checks import NearMissGuard
from retrieval.search.hits import Hit

log = logging.getLogger(__name__)

PART_QUOTES = 2  # units quoted for each part of a multi-part question
# How a tier-2 answer was composed, as its English ``reason`` says it.
_COMPOSED: dict[Composed, str] = {
    "extractive": "extractive",
    "by_part": "extractive, by part",
    "facts_by_part": "facts tables and extractive, by part",
    "llm": "llm",
}


class DocumentsTier:
    """Tier 2: cited passages (LLM-written or quoted), or None to leave it to the fallback."""

    def __init__(self, parts: AnswererParts) -> None:
        self.parts = parts
        self.settings = parts.settings

    async def answer(self, found: Found, timer: Timer) -> Answer | None:
        if not found.passing and not found.facts_parts:
            return None
        with timer.stage("compose"):
            return await self._compose(found)

    async def _compose(self, found: Found) -> Answer | None:
        question, hits, language = found.question, found.passing, found.language
        llm = self.parts.llm
        if llm is not None and not found.facts_parts:  # the tables' values are quoted, never
            try:
                generated, raw = await generate_answer(
                    llm, self.parts.prompt("answer"), question, hits
                )
            except LlmError as exc:
                log.warning("tier 2 LLM failed, answering extractively: %s", exc)
            else:
                if generated is None:
                    log.info("tier 2 LLM reply rejected (no or unknown citation): %.200s", raw)
                    return None
                return self.generated(generated, hits, language)
        return self.extractive(found)

    def generated(self, generated: Generated, hits: list[Hit], language: Language) -> Answer:
        citations = [hit_citation(n, hits[n - 1]) for n in generated.cited]
        return self._cited(generated.text, citations, hits, language, "llm")

    def extractive(self, found: Found) -> Answer | None:
        """The passages' best units quoted and cited; None when none holds what is asked."""
        hits = found.passing
        guard = self.parts.guard_in_use
        read = found.read
        if read is not None and read.parts:
            return self._multi_part_answer(found, read.parts, guard)
        quotes = select_quotes(
            found.terms,
            hits,
            self.parts.processor,
            limit=self.settings.answer.extractive_sentences,
            reading=read.answering if read is not None else Reading(),
            guard=guard,
        )
        return self._quoted(found, quotes)

    def _quoted(self, found: Found, quotes: list[Quote]) -> Answer | None:
        """The quotes as a cited answer; None (the fallback, with related links) if none, or
        if the scorer is not sure enough of them."""
        if not quotes:
            found.abstained = True
            return None
        confidence = self._confidence(found, quotes, 1.0)
        if confidence is False:
            return None
        quotes, citations = numbered(quotes, found.passing)
        body = f"{replies.extractive_intro(found.language)}\n{render_quotes(quotes)}"
        answer = self._cited(body, citations, found.passing, found.language, "extractive")
        return _sure(answer, found, confidence)

    def _confidence(self, found: Found, quotes: list[Quote], parts: float) -> float | bool | None:
        """The scorer's probability for these quotes (None with no fitted scorer), or False
        when it is below the risk target's threshold: tier 2 abstains (1/4)."""
        features = documents_features(quotes, found.passing, parts)
        found.documents_features = features
        p, sure = documents_confidence(
            self.parts.decisions.documents, features, self.settings.answer.documents_risk
        )
        found.documents_probability = p
        if not sure:
            found.abstained = found.unsure = True
            return False
        return p

    def _multi_part_answer(
        self, found: Found, parts: tuple[PartRead, ...], guard: NearMissGuard | None
    ) -> Answer | None:
        """A question that asks several things, answered part by part: each part's own units
        (its reading, with the entities the other parts name: "điểm chuẩn TTNT 2025, chỉ tiêu
        năm nay" asks the quota of TTNT too), under a heading naming what the part asks
        (bot.answer.question_parts), never the student's words; a part the facts tables
        answered (``found.facts_parts``) is their reply instead. A part whose units an earlier
        part already quoted, or that the quotes already answer, adds nothing; the parts the
        documents do not answer are named in one line at the end. When the scorer is not sure
        of the quotes, the tables' replies are given alone."""
        hits, language = found.passing, found.language
        processor = self.parts.processor
        facts = found.facts_parts or (None,) * len(parts)
        per_part = [
            []
            if facts[i] is not None
            else select_quotes(
                processor.query_terms(part.reading.text),
                hits,
                processor,
                limit=PART_QUOTES,
                reading=part.reading,
                guard=guard,
            )
            for i, part in enumerate(parts)
        ]
        chose = [bool(quotes) for quotes in per_part]
        taken: set[tuple[int, int]] = set()
        for i, quotes in enumerate(per_part):  # a unit answers the first part that chose it
            per_part[i] = [q for q in quotes if (q.hit_index, q.position) not in taken]
            taken.update((q.hit_index, q.position) for q in quotes)
        if len(parts) == 1:
            return self._quoted(found, per_part[0])
        if not any(per_part) and not any(facts):
            found.abstained = True
            return None
        everything = [q for quotes in per_part for q in quotes]
        quoting = [i for i, reply in enumerate(facts) if reply is None]
        confidence = 1.0 if not everything else None
        if everything:
            # a part the other parts' quotes answer is answered ("lương khởi điểm bn, tỉ lệ
            # có việc cao không": one line of the jobs table holds both)
            quotes_say = "\n".join(q.text for q in everything)
            # (named: a time of day quoted for one part is no answer to another's "mấy giờ")
            answered = sum(
                chose[i]
                or (bool(parts[i].own.attributes) and answered_by(parts[i].own, quotes_say, guard))
                for i in quoting
            )
            sure = self._confidence(found, everything, answered / len(quoting))
            if sure is False and not any(facts):
                return None
            if sure is False:  # the tables' replies stand alone; the rest is not found
                found.abstained = found.unsure = False
                per_part, chose, everything = [[] for _ in parts], [False] * len(parts), []
                confidence = 1.0
            else:
                confidence = sure
        quoted, citations = numbered(everything, hits)
        said_lines = [q.text for q in quoted]
        bodies: dict[int, str] = {}
        for i, reply in enumerate(facts):
            if reply is not None:
                bodies[i], citations = cited_after(reply, citations)
                said_lines.append(bodies[i])
        said = "\n".join(said_lines)
        shown = [i for i, quotes in enumerate(per_part) if quotes]
        # Headings in the documents' language: the guard's attributes are Vietnamese words.
        labels = part_labels([parts[i].own for i in shown], guard) if language == "vi" else None
        heading = dict(zip(shown, labels or [], strict=False))
        lines = [replies.extractive_intro(language)]
        missing: list[str] = []
        at = 0
        for i, quotes in enumerate(per_part):
            if i in bodies:
                lines.append(bodies[i])
            elif quotes:
                if i in heading:
                    lines.append(f"{heading[i]}:")
                lines.append(render_quotes(quoted[at : at + len(quotes)]))
                at += len(quotes)
            elif not chose[i] and not answered_by(parts[i].own, said, guard):
                missing.append(what_is_missing(parts[i].own, guard))
        if missing:
            # Named only when every part left is, and in Vietnamese: the guard's words are.
            named = language == "vi" and all(missing)
            lines.append(replies.part_not_found(language, missing if named else []))
        how: Composed = "facts_by_part" if bodies else "by_part"
        body, citations = in_reading_order("\n".join(lines), citations)
        answer = self._cited(body, citations, hits, language, how)
        return _sure(answer, found, confidence)

    def _cited(
        self,
        body: str,
        citations: list[Citation],
        hits: list[Hit],
        language: Language,
        how: Composed,
    ) -> Answer:
        faq_passage = hits[0].faq_id if hits else None
        return Answer(
            tier="documents",
            answer=replies.documents_reply(body, citations, language, self.settings.answer),
            language=language,
            citations=citations,
            chunk_ids=[h.chunk_id for h in hits if h.faq_id is None],
            reason=f"{len(hits)} chunks passed t_doc; answered {_COMPOSED[how]}",
            why=documents_answered(how, len(hits), faq_passage),
        )


def _sure(answer: Answer, found: Found, confidence: float | bool | None) -> Answer:
    """The answer with its confidence, and the features the scorer weighed (diagnostics)."""
    answer.confidence = confidence if isinstance(confidence, float) else None
    answer.scores["documents"] = {
        "features": [round(x, 4) for x in found.documents_features],
        "probability": answer.confidence,
    }
    return answer


def numbered(quotes: list[Quote], hits: list[Hit]) -> tuple[list[Quote], list[Citation]]:
    """One number per cited source (document and page), in order of first quote: two chunks
    of the same page are one source to the reader."""
    numbers: dict[tuple[int, int | None], int] = {}
    first_hit: dict[int, int] = {}
    for q in quotes:
        key = (hits[q.hit_index].document_id, hits[q.hit_index].page)
        if key not in numbers:
            numbers[key] = len(numbers) + 1
            first_hit[numbers[key]] = q.hit_index
    renumbered = [
        replace(q, source_n=numbers[(hits[q.hit_index].document_id, hits[q.hit_index].page)])
        for q in quotes
    ]
    return renumbered, [hit_citation(n, hits[hi]) for n, hi in first_hit.items()]


def in_reading_order(body: str, citations: list[Citation]) -> tuple[str, list[Citation]]:
    """``body``'s markers [n] and ``citations`` renumbered in the order the reader meets them
    (a tables' reply cited after the quotes may come first); a citation no marker names
    keeps its place after them."""
    known = {c.n for c in citations}
    order: dict[int, int] = {}
    for match in MARKER.finditer(body):
        if (n := int(match.group(1))) in known:
            order.setdefault(n, len(order) + 1)
    for c in citations:
        order.setdefault(c.n, len(order) + 1)
    renumbered = MARKER.sub(
        lambda m: f"[{order[int(m.group(1))]}]" if int(m.group(1)) in order else m.group(0), body
    )
    return renumbered, sorted((replace(c, n=order[c.n]) for c in citations), key=lambda c: c.n)
