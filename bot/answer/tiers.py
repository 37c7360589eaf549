"""Tier 1 (an FAQ entry, verbatim) and the fallback (no fact stated), behind the interface every
tier has: ``answer(found, timer)`` gives an ``Answer`` or None to pass the question on."""

from __future__ import annotations

import logging
from typing import Protocol

from bot.answer import replies
from bot.answer.faq_citation import faq_citation
from bot.answer.found import Found, Timer, hit_citation
from bot.answer.llm_answer import generate_fallback
from bot.answer.parts import AnswererParts
from bot.answer.replies import Answer
from bot.answer.why import documents_missed
from bot.core.citations import Citation
from bot.core.errors import LlmError
from bot.core.types import Language
from retrieval.faq.decision import FaqDecision
from retrieval.faq.sources import SourceDocument
from retrieval.search.hits import Hit
from retrieval.thresholds import Thresholds

log = logging.getLogger(__name__)

RELATED_SOURCES = 3  # links a fallback offers as "có thể liên quan"


class AnswerTier(Protocol):
    async def answer(self, found: Found, timer: Timer) -> Answer | None:
        """This tier's answer to what was found, or None to leave it to the next tier."""


class FaqTier:
    """Tier 1: the accepted FAQ entry's answer as staff wrote it, citing its source."""

    async def answer(self, found: Found, timer: Timer) -> Answer | None:
        if found.decision.accepted is None:
            return None
        return faq_answer(found.decision, found.language, found.faq_document)


def faq_answer(
    decision: FaqDecision, language: Language, document: SourceDocument | None = None
) -> Answer:
    """The accepted entry's answer, verbatim, and its source (``document``: the ingested
    document the entry names, if any) cited below it as a documents answer cites its own."""
    entry = decision.accepted
    assert entry is not None  # checked by the caller
    cited = faq_citation(entry.source, entry.source_url, document)
    citations = [cited] if cited is not None else []
    text = entry.answer  # verbatim, by design
    if citations:
        text = f"{text}\n\n{replies.sources_block(citations, language)}"
    return Answer(
        tier="faq",
        answer=text,
        language=language,
        citations=citations,
        faq_id=entry.faq_id,
        faq_external_id=entry.external_id,
        scores={"faq": round(entry.similarity, 4), "faq_matched": entry.matched_text},
        reason=decision.reason,
        confidence=decision.probability,
    )


class FallbackTier:
    """The last tier: the office's contacts (or the LLM's general reply with a disclaimer),
    never a fact of the university; the passages that fell short offered as links."""

    def __init__(self, parts: AnswererParts) -> None:
        self.parts = parts
        self.settings = parts.settings

    async def answer(self, found: Found, timer: Timer) -> Answer:
        with timer.stage("fallback"):
            answer = await self._reply(
                found.question,
                found.language,
                found.decision,
                found.hits,
                found.thresholds,
                found.out_of_scope,
            )
        if found.abstained:
            # Passages about the question, none holding what it asks: offered as links that
            # may help, with no fact stated from them.
            answer.related = related_sources(found.passing)
            answer.reason += (
                "; documents: not sure enough of the quotes (abstained)"
                if found.unsure
                else "; documents: no quoted unit holds what is asked (abstained)"
            )
            answer.answer = replies.with_related(answer.answer, answer.related, found.language)
        answer.why = documents_missed(
            max((h.similarity for h in found.hits), default=0.0),
            found.thresholds.t_doc,
            len(found.passing),
            found.out_of_scope,
            self.parts.guard_in_use,
            abstained=found.abstained,
        )
        return answer

    async def _reply(
        self,
        question: str,
        language: Language,
        decision: FaqDecision,
        hits: list[Hit],
        thresholds: Thresholds,
        out_of_scope: dict[str, frozenset[str]] | None = None,
    ) -> Answer:
        best_doc = max((h.similarity for h in hits), default=0.0)
        documents = f"best similarity {best_doc:.3f} (t_doc {thresholds.t_doc:.3f})"
        if out_of_scope:
            named = "; ".join(f"{c} {', '.join(sorted(v))}" for c, v in out_of_scope.items())
            documents = f"the passages that passed t_doc never mention {named}"
        reason = f"FAQ: {decision.reason}; documents: {documents}"
        text = replies.no_information_reply(self.settings.contact, language)
        llm = self.parts.llm
        if llm is not None:
            try:
                body = await generate_fallback(llm, self.parts.prompt("fallback"), question)
            except LlmError as exc:
                log.warning("fallback LLM failed: %s", exc)
            else:
                if body:
                    text = replies.llm_fallback_reply(
                        body, self.settings.answer, self.settings.contact, language
                    )
        return Answer(
            tier="fallback",
            answer=text,
            language=language,
            scores={"doc_best": round(best_doc, 4)},
            reason=reason,
        )


def not_a_question(language: Language) -> Answer:
    return Answer(
        tier="fallback",
        answer=replies.not_a_question_reply(language),
        language=language,
        reason="empty or not a question",
        why={"not_a_question": True},
    )


def related_sources(hits: list[Hit]) -> list[Citation]:
    """The first distinct sources of ``hits`` (a document or an FAQ entry), numbered."""
    seen: set[int] = set()
    out: list[Citation] = []
    for hit in hits:
        if hit.document_id in seen:
            continue
        seen.add(hit.document_id)
        out.append(hit_citation(len(out) + 1, hit))
        if len(out) == RELATED_SOURCES:
            break
    return out
