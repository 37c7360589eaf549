"""The URAG answerer (Algorithm 1): FAQ verbatim → cited documents → fallback.

The tiers (bot.answer.tiers, bot.answer.documents) are tried in order and the first that
answers wins, like a bot framework's handlers.
Critical facts are never paraphrased: a tier-1 answer is the stored text as staff wrote it; a
tier-2 answer quotes the documents (or an LLM answer whose citations were checked); the
fallback states no fact of the university at all.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import aclosing

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.documents import DocumentsTier
from bot.answer.facts import FactsTier
from bot.answer.found import Found, Timer
from bot.answer.llm_answer import check_citations, stream_answer
from bot.answer.lookup import Lookup
from bot.answer.parts import AnswererParts
from bot.answer.query_plan import small_talk_answer
from bot.answer.question import is_question
from bot.answer.read import Read, read_message
from bot.answer.replies import Answer
from bot.answer.stream import StreamDone, StreamEvent, StreamMeta, StreamReplace, StreamToken
from bot.answer.tiers import AnswerTier, FallbackTier, FaqTier, not_a_question
from bot.answer.why import faq_steps
from bot.core.errors import LlmError

log = logging.getLogger(__name__)


class Answerer(Lookup):
    """Answers a question: what it finds (``Lookup``), then the first tier that answers."""

    def __init__(
        self, parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession]
    ) -> None:
        super().__init__(parts, sessionmaker)
        self.documents = DocumentsTier(parts)
        self.fallback = FallbackTier(parts)
        self.facts = FactsTier(parts)
        self.tiers: tuple[AnswerTier, ...] = (FaqTier(), self.facts, self.documents)

    async def answer(self, message: str | Read) -> Answer:
        """The answer to a question: ``answer_stream``'s final answer (one path for both)."""
        final: Answer | None = None
        async for event in self.answer_stream(message):
            if isinstance(event, StreamDone):
                final = event.answer
        if final is None:  # answer_stream always ends with StreamDone
            raise RuntimeError("the answer stream ended without a final answer")
        return final

    async def answer_stream(self, message: str | Read) -> AsyncIterator[StreamEvent]:
        """``answer()`` as events, streaming the LLM's tier-2 reply as it is written.

        Tier 1 and retrieval run exactly as in ``answer()``. Only a tier-2 answer in LLM mode
        streams: ``StreamMeta("documents")``, then a ``StreamToken`` per delta; the whole reply
        then goes through the same citation check. If the check fails (or the stream breaks
        off), ``StreamReplace`` tells the reader to drop what was shown, and the final answer is
        the one ``answer()`` would have given in that case. Every stream ends with one
        ``StreamDone`` carrying the final ``Answer`` (for the streamed body: with its sources and
        disclaimer, as ``answer()`` formats them). Without an LLM, or when tier 1 answers, the
        stream is that single ``StreamDone``.

        ``message`` is the student's text, read here once, or its reading when the conversation
        step has read it (bot.answer.read): small talk (a greeting, an opener, a thank-you, a
        request for a person) gets a polite reply and no search; a question is answered without
        the opener in front of it, as if asked alone. The final answer carries the reading
        every step used (``Answer.read``).
        """
        timer = Timer()
        started = time.perf_counter()
        read = message if isinstance(message, Read) else read_message(message)
        question, language = read.question, read.language
        if not is_question(question):
            yield StreamDone(_read_as(not_a_question(language), read))
            return
        if read.kind is not None:
            contact = self.settings.contact
            answer = small_talk_answer(read.kind, language, contact, how="small talk")
            yield StreamDone(_read_as(answer, read))
            return
        found = await self.find(read, timer)
        llm = self.parts.llm
        if found.decision.accepted is not None or not found.passing or llm is None:
            yield StreamDone(
                self._finish(await self.answer_found(found, timer), found, timer, started)
            )
            return
        exact = await self.facts.answer(found, timer)  # the tables' values are never streamed
        if exact is None and found.facts_parts:  # nor a reply holding some of them
            exact = self.documents.extractive(found) or await self.fallback.answer(found, timer)
        if exact is not None:
            yield StreamDone(self._finish(exact, found, timer, started))
            return

        yield StreamMeta("documents")
        pieces: list[str] = []
        result: Answer | None = None
        with timer.stage("compose"):
            deltas = stream_answer(llm, self.parts.prompt("answer"), question, found.passing)
            try:
                async with aclosing(deltas):
                    async for delta in deltas:
                        pieces.append(delta)
                        yield StreamToken(delta)
            except LlmError as exc:
                log.warning("tier 2 LLM stream failed, answering extractively: %s", exc)
                if pieces:
                    yield StreamReplace("the LLM stream broke off")
                result = self.documents.extractive(found)
            else:
                raw = "".join(pieces)
                generated = check_citations(raw, len(found.passing))
                if generated is None:
                    log.info("tier 2 LLM reply rejected (no or unknown citation): %.200s", raw)
                    yield StreamReplace("the reply cites no source or an unknown one")
                else:
                    result = self.documents.generated(generated, found.passing, language)
        if result is None:
            result = await self.fallback.answer(found, timer)
        yield StreamDone(self._finish(result, found, timer, started))

    async def answer_found(self, found: Found, timer: Timer) -> Answer:
        """Tier 1, else tier 2 (in one piece), else the fallback."""
        if found.decision.accepted is None and found.small_talk is not None:
            return found.small_talk
        for tier in self.tiers:
            result = await tier.answer(found, timer)
            if result is not None:
                return result
        return await self.fallback.answer(found, timer)

    def _finish(self, result: Answer, found: Found, timer: Timer, started: float) -> Answer:
        result.scores = {**found.scores, **result.scores}
        result.timings_ms = {**timer.ms, "total": round((time.perf_counter() - started) * 1000, 2)}
        result.trace = found.trace
        result.query = {
            "restored": found.trace.get("restored"),
            "parts": [text for text, _ in found.parts],
        }
        steps = faq_steps(found.decision)
        result.why = {"faq": steps, **result.why}
        result.read = found.read
        return result


def _read_as(answer: Answer, read: Read) -> Answer:
    answer.read = read
    return answer
