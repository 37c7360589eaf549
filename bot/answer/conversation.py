"""Answering one message of a conversation (1/4): the use case the worker and the web chat both
call. The message is read once as it comes in (``bot.answer.read``), then in its conversation
(``bot.answer.followup``: alone first, context only for what it lacks), answered by the
answerer from that reading (its small talk, or its question without an opener: it is not read
again), and the reading goes with the answer, to be stored and shown to staff: how it was read,
and the words of the message that said each value the answer was about."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.followup import (
    ContextRules,
    Reading,
    Turn,
    alone,
    read_in_context,
    rewrite_with_llm,
    takes_a_topic,
)
from bot.answer.read import Read, read_message
from bot.answer.replies import Answer, answer_body
from bot.answer.stream import StreamDone, StreamEvent
from bot.conversations.store import earlier_turns


class ConversationAnswerer:
    """Reads a conversation's message in context and answers it."""

    def __init__(self, answerer: Answerer, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.answerer = answerer
        self.sessionmaker = sessionmaker
        parts = answerer.parts
        self.rules = ContextRules(
            parts.guard,
            parts.processor,
            parts.decisions.context,
            parts.settings.answer.context_pause_minutes * 60.0,
        )

    async def read(
        self, conversation_id: int, message_id: int, text: str, now: datetime | None
    ) -> Reading:
        """``text`` read alone, or with what it lacks from the conversation's last question."""
        history = self.answerer.settings.worker.history_turns
        async with self.sessionmaker() as session:
            earlier = await earlier_turns(session, conversation_id, message_id, history)
        turns = [Turn(t.text, t.at, t.small_talk) for t in earlier]
        return await self.read_turns(text, turns, now)

    async def read_turns(self, text: str, turns: list[Turn], now: datetime | None) -> Reading:
        reading = read_in_context(read_message(text), turns, self.rules, now)
        llm = self.answerer.parts.llm
        if reading.mode == "context" and llm is not None and turns:
            asked = reading.message.question if reading.message is not None else text
            reading = await rewrite_with_llm(llm, reading, asked, turns[-1].text)
        return reading

    async def answer(
        self, conversation_id: int, message_id: int, text: str, now: datetime | None
    ) -> Answer:
        reading = await self.read(conversation_id, message_id, text, now)
        return await self.answer_reading(text, reading)

    async def answer_reading(self, text: str, reading: Reading) -> Answer:
        """The answer to ``reading``. A message that names nothing the vocabulary reads was read
        with the earlier question's whole topic in front ("thứ 7 có làm việc không" after the
        office's phone number); it is answered alone first, and takes the topic only when alone
        it gets the fallback and with the topic it gets an answer holding at least half of its
        own words. Most such messages ask something new ("trường có hồ bơi không" after the
        library's hours, "căn tin có bao nhiêu chỗ" after the dorm's rules). One marked as a
        follow-up ("thế đăng ký ntn" after the dorm's prices) tries the topic first."""
        message = reading.message or read_message(text)
        if not takes_a_topic(reading):
            return _with_reading(await self.answerer.answer(reading.answering()), reading)
        if message.alone is not None and message.alone.marked:
            # "thế đăng ký ntn" after the dorm's prices: a follow-up by its mark, the topic first
            answer = await self.answerer.answer(reading.answering())
            if answer.tier == "fallback" or self._about_own_words(message, answer):
                return _with_reading(answer, reading)
            reading = alone(message, "new_topic")
            return _with_reading(await self.answerer.answer(reading.answering()), reading)
        alone_reading = alone(message, "answered_alone")
        alone_answer = await self.answerer.answer(alone_reading.answering())
        if alone_answer.tier != "fallback":
            return _with_reading(alone_answer, alone_reading)
        answer = await self.answerer.answer(reading.answering())
        if answer.tier == "fallback" or not self._about_own_words(message, answer):
            return _with_reading(alone_answer, alone(message, "new_topic"))
        return _with_reading(answer, reading)

    def _about_own_words(self, message: Read, answer: Answer) -> bool:
        own = set(message.alone.own) if message.alone is not None else set()
        said = set(self.answerer.parts.processor.query_terms(answer_body(answer)))  # not sources
        # At least half of them: one common word ("cơ sở" of "xe buýt giữa 2 cơ sở") is found
        # in answers about anything.
        return not own or 2 * len(own & said) >= len(own)

    async def answer_stream(
        self, conversation_id: int, message_id: int, text: str, now: datetime | None
    ) -> AsyncIterator[StreamEvent]:
        """``answer`` as events (``Answerer.answer_stream``): the final ``StreamDone`` carries
        the answer with its reading. A reading that took a whole topic is checked first (see
        ``answer_reading``), so it arrives whole, in the final event."""
        reading = await self.read(conversation_id, message_id, text, now)
        if takes_a_topic(reading):
            yield StreamDone(await self.answer_reading(text, reading))
            return
        async for event in self.answerer.answer_stream(reading.answering()):
            if isinstance(event, StreamDone):
                yield StreamDone(_with_reading(event.answer, reading))
            else:
                yield event


def _with_reading(answer: Answer, reading: Reading) -> Answer:
    """The answer with how its message was read, and the words of the question answered that
    said each value it was about (when it was searched)."""
    answer.reading = reading.to_json()
    said = said_of(answer)
    if said:
        answer.reading["said"] = said
    return answer


def said_of(answer: Answer) -> list[dict[str, str]]:
    """The words of the question answered that said each value it was about, as stored with
    the answer's reading (none when it was not searched)."""
    if answer.read is None:
        return []
    return [
        {"slot": s.category, "label": s.label, "value": s.value, "words": s.words}
        for s in answer.read.said
    ]
