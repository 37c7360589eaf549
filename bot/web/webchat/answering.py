"""A web chat message answered once, inline, by the request that posted it.

The request records the message and claims it in one transaction (``bot.conversations.queue``,
the worker's lease rule), so no worker ever sees it waiting. The answer runs in a task of its
own: a reader who leaves does not stop it being stored, and the same message id posted again
then gets the stored reply. A repeated message id waits for the first request's reply, or
takes the message over once that request's lease has run out. A question held by the
per-conversation cap (429) is answered when the same message id comes again and the
conversation has room by then; so the page's resend after ``Retry-After`` is answered once.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer import replies
from bot.answer.question import clean_question
from bot.answer.replies import Answer
from bot.answer.stream import StreamDone, StreamMeta, StreamReplace, StreamToken
from bot.conversations.inbound import release_held
from bot.conversations.queue import (
    ClaimedInbound,
    claim_inbound,
    finish_inbound,
    renew_lease,
    skip_inbound,
)
from bot.conversations.store import (
    HELD_ERROR,
    bot_may_answer,
    bot_reply_to,
    citations_json,
    inbound_event,
    record_inbound,
    store_reply,
)
from bot.core.clock import utcnow
from bot.core.messages import InboundMessage
from bot.core.settings import Settings
from bot.core.types import Channel
from bot.db.models import Conversation, Message, MessageStatus
from bot.runtime import Runtime
from bot.web.webchat.protocol import ChatRequest
from retrieval.text.language import detect_language

log = logging.getLogger(__name__)

CHANNEL: Channel = "web"
POLL_S = 0.2  # how often a repeated message id looks for the first request's reply
SHUTDOWN_WAIT_S = 10.0  # answers under way get this long to finish when the server stops
ABANDONED_ERROR = "the visitor left before the answer started"

Event = tuple[str, dict[str, Any]]  # a server-sent event: name and payload


# -- what a request turns into, before any answering ------------------------------------------


@dataclass(frozen=True)
class Stored:
    """Answered before: send the stored reply again."""

    reply: Message


@dataclass(frozen=True)
class HandedOver:
    """Staff took over this conversation: the bot stays quiet."""


@dataclass(frozen=True)
class Conflict:
    message: str
    retry_after: int | None = None


@dataclass(frozen=True)
class Held:
    """Stored but not answered: the visitor's earlier questions are still waiting
    (``limits.pending_per_conversation``)."""


Outcome = ClaimedInbound | Stored | HandedOver | Conflict | Held


@dataclass(frozen=True)
class Answering:
    task: asyncio.Task[tuple[Answer, int | None]]
    events: asyncio.Queue[Event | None]  # None: no more events


async def _handed_over(session: AsyncSession, conversation_id: int) -> bool:
    conversation = await session.get(Conversation, conversation_id)
    if conversation is None:
        return False
    return not bot_may_answer(conversation.mode, conversation.paused_until, utcnow())


def _details(answer: Answer, streamed: bool) -> dict[str, Any]:
    data = {
        "language": answer.language,
        "reason": answer.reason,
        "why": answer.why,
        "faq_external_id": answer.faq_external_id,
        "faq_id": answer.faq_id,  # the entry the admin adds a phrasing to
        "chunk_ids": answer.chunk_ids,
        "scores": answer.scores,
        "timings_ms": answer.timings_ms,
        "streamed": streamed,
        "confidence": answer.confidence,
        "reading": answer.reading,
    }
    # Scores are diagnostics: whatever numpy or a reranker put there must not fail the insert.
    return dict(json.loads(json.dumps(data, default=str)))


def _error_answer(settings: Settings, text: str, error: BaseException) -> Answer:
    language = detect_language(clean_question(text))
    return Answer(
        tier="fallback",
        answer=replies.no_information_reply(settings.contact, language),
        language=language,
        reason=f"error while answering: {type(error).__name__}",
        why={"error": type(error).__name__},
    )


class Answers:
    """Begins, answers and stores the web chat's messages; tracks the answers under way."""

    def __init__(self, *, duplicate_wait_s: float = 30.0) -> None:
        self.duplicate_wait_s = duplicate_wait_s
        self._running: set[asyncio.Task[tuple[Answer, int | None]]] = set()

    async def begin(self, runtime: Runtime, chat: ChatRequest) -> Outcome:
        """Record the message and claim it, or find what became of it if it is a repeat."""
        lease_s = runtime.settings.web.answer_lease_s
        message = InboundMessage(
            channel=CHANNEL,
            event_id=chat.message_id,
            external_user_id=chat.visitor_id,
            kind="text",
            text=chat.text,
        )
        max_pending = runtime.settings.limits.pending_per_conversation
        async with runtime.sessionmaker.begin() as session:
            recorded = await record_inbound(session, message, max_pending=max_pending)
            if recorded.held:
                return Held()
            if recorded.message_id is not None:
                if await _handed_over(session, recorded.conversation_id):
                    await skip_inbound(session, recorded.message_id)
                    return HandedOver()
                # Claimed in the same transaction as the insert: no worker ever sees it waiting.
                claimed = await claim_inbound(session, recorded.message_id, lease_s)
                assert claimed is not None  # the row was inserted just now, status received
                return claimed
        return await self._await_first(runtime, chat, lease_s)

    async def _await_first(self, runtime: Runtime, chat: ChatRequest, lease_s: float) -> Outcome:
        """A repeated message id: the first request's reply, once there is one."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.duplicate_wait_s
        max_pending = runtime.settings.limits.pending_per_conversation
        while True:
            async with runtime.sessionmaker.begin() as session:
                found = await inbound_event(session, CHANNEL, chat.message_id)
                if found is None:  # deleted meanwhile (a staff clean-up): nothing to resend
                    return Conflict("this message_id is no longer known; send a new one")
                inbound, visitor_id = found
                if visitor_id != chat.visitor_id or inbound.text != chat.text:
                    return Conflict("this message_id was already used for another message")
                if inbound.status == MessageStatus.skipped:
                    if inbound.error != HELD_ERROR:
                        return HandedOver()
                    if await _handed_over(session, inbound.conversation_id):
                        return HandedOver()  # held, then staff took over: theirs to answer
                    # Held when first sent: the page sends it again after Retry-After, and it
                    # is answered now if the visitor's earlier questions have been meanwhile.
                    if not await release_held(session, inbound.id, max_pending=max_pending):
                        return Held()
                if inbound.status == MessageStatus.answered:
                    reply = await bot_reply_to(session, inbound.id)
                    if reply is None:
                        return Conflict("this message was answered by a person; reload the chat")
                    return Stored(reply)
                claimed = await claim_inbound(session, inbound.id, lease_s)
                if claimed is not None:  # the first request died before answering
                    return claimed
            if loop.time() >= deadline:
                return Conflict(
                    "this message is still being answered; try again in a few seconds",
                    retry_after=2,
                )
            await asyncio.sleep(POLL_S)

    async def abandon(self, runtime: Runtime, claimed: ClaimedInbound) -> None:
        """Give up a question whose visitor left before its answer started: nothing is spent on
        it, and it is marked failed, so the same message id sent again is answered then."""
        async with runtime.sessionmaker.begin() as session:
            await finish_inbound(session, claimed, "failed", ABANDONED_ERROR)

    def answer_apart(
        self,
        runtime: Runtime,
        chat: ChatRequest,
        claimed: ClaimedInbound,
        on_done: Callable[[], None] | None = None,
    ) -> Answering:
        """Answer in a task of its own, so that a reader who leaves (an aiohttp server with
        ``handler_cancellation`` cancels the handler) does not stop the answer being stored:
        the same message id sent again then gets it. ``on_done`` runs once the task ends."""
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.create_task(self._answer(runtime, chat, claimed, events))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        if on_done is not None:
            task.add_done_callback(lambda _: on_done())
        return Answering(task, events)

    async def _answer(
        self,
        runtime: Runtime,
        chat: ChatRequest,
        claimed: ClaimedInbound,
        events: asyncio.Queue[Event | None],
    ) -> tuple[Answer, int | None]:
        renewing = asyncio.create_task(_keep_leased(runtime, claimed))
        try:
            return await self._answer_and_store(runtime, chat, claimed, events.put_nowait)
        finally:
            renewing.cancel()
            events.put_nowait(None)

    async def _answer_and_store(
        self,
        runtime: Runtime,
        chat: ChatRequest,
        claimed: ClaimedInbound,
        emit: Callable[[Event], None],
    ) -> tuple[Answer, int | None]:
        answer: Answer | None = None
        streamed = False
        question = chat.text
        try:
            events = runtime.conversations.answer_stream(
                claimed.conversation_id, claimed.id, chat.text, utcnow()
            )
            async for event in events:
                if isinstance(event, StreamMeta):
                    emit(("meta", {"tier": event.tier}))
                elif isinstance(event, StreamToken):
                    streamed = True
                    emit(("token", {"text": event.text}))
                elif isinstance(event, StreamReplace):
                    emit(("replace", {"reason": event.reason}))
                elif isinstance(event, StreamDone):
                    answer = event.answer
                    question = (answer.reading or {}).get("asked") or chat.text
            if answer is None:
                raise RuntimeError("the answer stream ended without a final answer")
        except Exception as exc:  # the handler's edge: a polite reply, never a 500
            log.exception("web chat: answering message %d failed", claimed.id)
            if streamed:
                emit(("replace", {"reason": "error"}))
            answer = _error_answer(runtime.settings, chat.text, exc)
        try:
            async with runtime.sessionmaker.begin() as session:
                reply_id = await _store_reply(
                    session,
                    claimed,
                    answer,
                    _details(answer, streamed),
                    question if question != chat.text else None,
                )
        except Exception:  # the visitor still gets the answer; a retry re-answers later
            log.exception("web chat: storing the reply to message %d failed", claimed.id)
            return answer, None
        if reply_id is None:
            log.warning("web chat: message %d was taken over; reply not stored", claimed.id)
        return answer, reply_id

    async def finish(self, app: web.Application) -> None:
        """On shutdown: let answers under way finish for a while, then cancel the rest (their
        messages stay leased, and a retry after the lease answers them)."""
        if self._running:
            await asyncio.wait(set(self._running), timeout=SHUTDOWN_WAIT_S)
        for task in set(self._running):
            task.cancel()


async def _keep_leased(runtime: Runtime, claimed: ClaimedInbound) -> None:
    """Renew the question's short lease while its answer runs (``web.answer_lease_s``): held
    as long as this process lives, taken over soon after it dies."""
    lease_s = runtime.settings.web.answer_lease_s
    while True:
        await asyncio.sleep(lease_s / 3)
        try:
            async with runtime.sessionmaker.begin() as session:
                held = await renew_lease(session, claimed, lease_s)
        except Exception:  # the next renewal tries again; the answer goes on
            log.warning("web chat: renewing the lease of message %d failed", claimed.id)
            continue
        if not held:
            log.warning("web chat: message %d was taken over while answered here", claimed.id)
            return


async def _store_reply(
    session: AsyncSession,
    claimed: ClaimedInbound,
    answer: Answer,
    details: dict[str, Any],
    question: str | None = None,
) -> int | None:
    """Store the reply and close the question, if this request still holds it; the reply id."""
    return await store_reply(
        session,
        inbound_id=claimed.id,
        attempt=claimed.attempts,
        conversation_id=claimed.conversation_id,
        channel=CHANNEL,
        text_=answer.answer,
        tier=answer.tier,
        citations=citations_json(answer.citations),
        details=details,
        question=question,  # a follow-up's standalone form
        delivered=True,  # streamed to the browser by this request
        wants_staff=answer.wants_staff,
        tag_question=False,  # the history shows the tier on the reply only
    )
