"""The worker: claims queued questions, answers them and stores the replies for delivery.

The queues and their lease rule are ``bot.conversations.queue``; sending is ``delivery``.
Answering and delivering are separate steps joined by the outbox row, written in the same
transaction that marks the question answered: an answer is computed once and stored before any
platform is called; a crash between the platform's acceptance and our bookkeeping can at worst
send one reply twice, never lose one. No transaction stays open across the answerer or a
platform call.

A claim is held while its answer runs (``lease``: the lease renewed, the answer bounded by
``answer_timeout_s``), so an LLM slower than the lease answers once. ``attempts`` counts claims;
past ``max_attempts`` a message is not claimed again, and the sweep (every ``sweep_s``) marks it
failed so that its conversation goes on. Replies are sent in tasks, a small pool per channel
(``delivery``), so answering never waits on a platform.

Workers wake on NOTIFY (``tuvan_inbox``/``tuvan_outbox``) and poll as a fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import aiohttp
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.interface import Adapter
from bot.answer import replies
from bot.answer.answerer import Answerer
from bot.answer.conversation import ConversationAnswerer
from bot.conversations.queue import (
    INBOX_CHANNEL,
    OUTBOX_CHANNEL,
    ClaimedInbound,
    claim_next_inbound,
    claim_next_outbound,
    fail_exhausted,
    finish_inbound,
    retry_inbound,
)
from bot.conversations.store import (
    bot_may_answer,
    citations_json,
    conversation_state,
    store_reply,
)
from bot.core.clock import utcnow
from bot.core.metrics import METRICS
from bot.core.settings import Settings
from bot.core.types import Language
from bot.db.notify import listen
from bot.worker.delivery import Delivery, backoff
from bot.worker.lease import ClaimLostError, hold_while
from retrieval.text.language import detect_language

log = logging.getLogger(__name__)


class Worker:
    """Answers and delivers until stopped; any number of workers share the queues."""

    def __init__(
        self,
        settings: Settings,
        sessionmaker: async_sessionmaker[AsyncSession],
        answerer: Answerer,
        adapters: Mapping[str, Adapter],
        http: aiohttp.ClientSession,
        *,
        database_url: str | None = None,
    ) -> None:
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.answerer = answerer
        self.conversations = ConversationAnswerer(answerer, sessionmaker)
        self._wake = asyncio.Event()
        self.delivery = Delivery(
            settings.worker, sessionmaker, adapters, http, on_done=self._wake.set
        )
        self._database_url = database_url  # for LISTEN; None: poll only
        self._slots = asyncio.Semaphore(max(1, settings.worker.concurrency))
        self._next_sweep = 0.0  # the event loop's clock: sweep at the first step

    # -- the loop ---------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set; finishes the answers in hand before returning."""
        listener = None
        if self._database_url is not None:  # anything queued while nobody listened, at once
            listener = asyncio.create_task(
                listen(
                    self._database_url,
                    (INBOX_CHANNEL, OUTBOX_CHANNEL),
                    on_listening=self._wake.set,
                    on_notify=self._on_notify,
                    who="worker",
                )
            )
        tasks: set[asyncio.Task[None]] = set()
        try:
            while not stop.is_set():
                try:
                    did = await self.step(tasks)
                except (SQLAlchemyError, OSError) as exc:
                    # The database restarting or unreachable: wait and try again; nothing is
                    # lost (claims not made stay queued, claims made come back with the lease).
                    log.warning("worker cannot reach the database (%s); retrying", exc)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.settings.worker.poll_s)
                    continue
                if did:
                    continue
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        _first(self._wake.wait(), stop.wait()), self.settings.worker.poll_s
                    )
        finally:
            if tasks:  # answers under way finish (each is bounded by answer_timeout_s)
                await asyncio.gather(*tasks, return_exceptions=True)
            await self.delivery.stop()
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listener

    async def step(self, tasks: set[asyncio.Task[None]] | None = None) -> bool:
        """Claim and start what can be done now; True if anything was claimed or given up.
        With ``tasks``, answers and sends run in tasks (answers added to ``tasks``, sends
        to ``delivery.running``); without, each is awaited in turn."""
        w = self.settings.worker
        did = await self._sweep_if_due()
        # Replies first: they are ready, and a platform's window may be closing.
        while True:
            async with self.sessionmaker.begin() as session:
                out = await claim_next_outbound(
                    session,
                    w.lease_s,
                    max_attempts=w.max_attempts,
                    busy=self.delivery.busy_channels(),
                )
            if out is None:
                break
            did = True
            if tasks is None:
                await self.delivery.deliver(out)
            else:
                self.delivery.start(out)
        while not self._slots.locked():
            async with self.sessionmaker.begin() as session:
                claimed = await claim_next_inbound(session, w.lease_s, max_attempts=w.max_attempts)
            if claimed is None:
                break
            did = True
            await self._slots.acquire()
            task = asyncio.create_task(self._answer_slot(claimed))
            if tasks is not None:
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            else:
                await task
        return did

    async def sweep(self) -> int:
        """Mark failed the messages whose claims reached ``max_attempts`` without a result
        (their workers crashed or hung), so that their conversations go on; how many."""
        async with self.sessionmaker.begin() as session:
            given_up = await fail_exhausted(session, self.settings.worker.max_attempts)
        for row in given_up:
            log.warning(
                "message %d (%s, %s) given up after %d claims",
                row.id,
                row.direction,
                row.channel,
                row.attempts,
            )
            METRICS.inc(
                "tuvan_messages_failed_total",
                channel=row.channel,
                direction=row.direction,
                reason="abandoned",
            )
        return len(given_up)

    async def _sweep_if_due(self) -> bool:
        now = asyncio.get_running_loop().time()
        if now < self._next_sweep:
            return False
        self._next_sweep = now + self.settings.worker.sweep_s
        return await self.sweep() > 0

    async def drain(self) -> None:
        """Answer and deliver everything queued now (tests, ``tuvan demo`` start-up)."""
        tasks: set[asyncio.Task[None]] = set()
        while True:
            did = await self.step(tasks)
            pending = tasks | self.delivery.running
            if not did and not pending:
                return
            if pending:
                await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)

    def _on_notify(self, payload: str) -> None:
        self._wake.set()

    # -- answering --------------------------------------------------------------------------

    async def _answer_slot(self, claimed: ClaimedInbound) -> None:
        """Answer while holding the claim: its lease renewed, the answer bounded in time."""
        w = self.settings.worker
        try:
            await hold_while(
                self.answer(claimed), claimed, self.sessionmaker, w.lease_s, w.answer_timeout_s
            )
        except ClaimLostError as exc:
            log.warning("answering message %d stopped: %s", claimed.id, exc)
        except Exception as exc:  # a task boundary: one message's failure stops nothing else
            log.exception("answering message %d failed", claimed.id)
            await self._retry(claimed, f"{type(exc).__name__}: {exc}")
        finally:
            self._slots.release()
            self._wake.set()  # a slot is free: the loop may claim the next question

    async def answer(self, claimed: ClaimedInbound) -> None:
        started = utcnow()
        async with self.sessionmaker() as session:
            conv = await conversation_state(session, claimed.conversation_id)
        if not bot_may_answer(conv.mode, conv.paused_until, started):
            await self._finish(claimed, status="skipped", error="staff answering")
            METRICS.inc("tuvan_messages_skipped_total", channel=claimed.channel)
            return
        # "/start" says nothing of the student's language: their app's (the locale) does.
        greeting = claimed.kind in ("command", "follow")
        language = _language("" if greeting else claimed.text, conv.locale)
        question = None
        details: dict[str, Any] = {}
        tier = None
        wants_staff = False
        citations: list[dict[str, Any]] = []
        if greeting:
            brand = self.settings.brand
            reply_text = replies.greeting_reply(self.settings.contact, brand, language)
            details = {"suggestions": replies.greeting_suggestions(brand, language)}
        elif claimed.kind == "unsupported":
            reply_text = replies.text_only_reply(language)
        else:
            typing = asyncio.create_task(
                self.delivery.keep_typing(claimed.channel, conv.external_id)
            )
            try:
                answer = await self.conversations.answer(
                    claimed.conversation_id, claimed.id, claimed.text, started
                )
                question = (answer.reading or {}).get("asked")
            finally:
                typing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await typing
            reply_text = answer.answer
            tier = answer.tier
            wants_staff = answer.wants_staff
            citations = citations_json(answer.citations)
            details = {
                "language": answer.language,  # the vote buttons' labels speak it
                "scores": answer.scores,
                "timings_ms": answer.timings_ms,
                "reason": answer.reason,
                "why": answer.why,
                "faq_external_id": answer.faq_external_id,
                "faq_id": answer.faq_id,  # the entry the admin adds a phrasing to
                "quick_replies": _related_questions(answer.trace),
                "confidence": answer.confidence,
                "reading": answer.reading,
            }
            METRICS.inc("tuvan_answers_total", channel=claimed.channel, tier=answer.tier)
        stored = await self.store_answer(
            claimed, reply_text, tier, citations, details, question, wants_staff=wants_staff
        )
        if stored:
            METRICS.observe(
                "tuvan_answer_seconds",
                (utcnow() - started).total_seconds(),
                channel=claimed.channel,
            )

    async def store_answer(
        self,
        claimed: ClaimedInbound,
        reply_text: str,
        tier: str | None,
        citations: list[dict[str, Any]],
        details: dict[str, Any],
        question: str | None,
        *,
        wants_staff: bool = False,
    ) -> bool:
        """Mark the question answered and queue the reply, in one transaction, if the claim
        is still ours; else drop the late result."""
        async with self.sessionmaker.begin() as session:
            reply_id = await store_reply(
                session,
                inbound_id=claimed.id,
                attempt=claimed.attempts,
                conversation_id=claimed.conversation_id,
                channel=claimed.channel,
                text_=reply_text,
                tier=tier,
                citations=citations,
                details=details,
                question=question if question != claimed.text else None,
                wants_staff=wants_staff,
            )
        if reply_id is None:
            log.warning("message %d was claimed again meanwhile; dropping this answer", claimed.id)
            return False
        self._wake.set()
        return True

    async def _finish(self, claimed: ClaimedInbound, *, status: str, error: str | None) -> bool:
        async with self.sessionmaker.begin() as session:
            held = await finish_inbound(session, claimed, status, error)
        if not held:
            log.warning("message %d was claimed again meanwhile; not marked %s", claimed.id, status)
        return held

    async def _retry(self, claimed: ClaimedInbound, error: str) -> None:
        w = self.settings.worker
        if claimed.attempts >= w.max_attempts:
            if await self._finish(claimed, status="failed", error=error[:1000]):
                METRICS.inc(
                    "tuvan_messages_failed_total",
                    channel=claimed.channel,
                    direction="in",
                    reason="error",
                )
            return
        at = utcnow() + timedelta(seconds=backoff(w, claimed.attempts))
        async with self.sessionmaker.begin() as session:
            held = await retry_inbound(session, claimed, error, at)
        if not held:
            log.warning("message %d was claimed again meanwhile; retry not recorded", claimed.id)


def _language(text_: str, locale: str | None) -> Language:
    if text_.strip():
        return detect_language(text_)
    return "en" if (locale or "vi").lower().startswith("en") else "vi"


def _related_questions(trace: Mapping[str, Any]) -> list[str]:
    """Other FAQ questions close to this one, offered as quick replies (Messenger)."""
    decision = trace.get("faq")
    if decision is None:
        return []
    accepted = decision.accepted.faq_id if decision.accepted is not None else None
    out = []
    for verdict in decision.verdicts:
        c = verdict.candidate
        if c.faq_id != accepted and c.question not in out:
            out.append(c.question)
    return out[:13]


async def _first(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
