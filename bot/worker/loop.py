"""The worker: answers queued inbound messages and delivers queued replies, exactly once.

Two queues live in the ``messages`` table (no broker): inbound rows in ``received`` and outbound
rows in ``queued``. A worker claims one row at a time with ``FOR UPDATE SKIP LOCKED``, so
several workers in several processes share the queues without taking the same row. A claim is a
lease (``lease_until``): a worker that dies mid-answer leaves the row to be claimed again when
the lease runs out, and a worker that finds its lease taken over drops its late result. Within
one conversation rows are taken in arrival order: a message waits while an earlier one of the
same conversation is still to be answered (or its reply still to be sent).

Answering and delivering are separate steps joined by the outbox row, written in the same
transaction that marks the question answered: an answer is computed once and stored before any
platform is called; a crash between the platform's acceptance and our bookkeeping can at worst
send one reply twice, never lose one. No transaction stays open across the answerer or a
platform call.

Workers wake on NOTIFY (``tuvan_inbox``/``tuvan_outbox``) and poll as a fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import aiohttp
import psycopg
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.base import Adapter
from bot.answer import replies
from bot.answer.answerer import Answerer
from bot.answer.followup import standalone_question
from bot.conversations.store import (
    INBOX_CHANNEL,
    OUTBOX_CHANNEL,
    bot_may_answer,
    citations_json,
    previous_questions,
    store_reply,
)
from bot.core.clock import utcnow
from bot.core.errors import SendError
from bot.core.messages import OutboundReply, ReplyCitation
from bot.core.metrics import METRICS
from bot.core.settings import Settings
from bot.core.types import Language
from retrieval.text.language import detect_language

log = logging.getLogger(__name__)

# The next inbound row to answer: received, or answering with a lease run out; not before an
# earlier unanswered row of its conversation. SKIP LOCKED lets concurrent workers pass over a
# row another one is claiming.
_CLAIM_INBOUND = text(
    """
    UPDATE messages SET status = 'answering', attempts = attempts + 1,
           lease_until = now() + make_interval(secs => :lease)
    WHERE id = (
        SELECT m.id FROM messages m
        WHERE m.direction = 'in'
          AND (m.status = 'received' OR (m.status = 'answering' AND m.lease_until < now()))
          AND (m.next_attempt_at IS NULL OR m.next_attempt_at <= now())
          AND NOT EXISTS (
              SELECT 1 FROM messages p
              WHERE p.conversation_id = m.conversation_id AND p.direction = 'in'
                AND p.id < m.id AND p.status IN ('received', 'answering'))
        ORDER BY m.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
    RETURNING id, conversation_id, channel, kind, text, attempts
    """
)

_CLAIM_OUTBOUND = text(
    """
    UPDATE messages SET status = 'sending', attempts = attempts + 1,
           lease_until = now() + make_interval(secs => :lease)
    WHERE id = (
        SELECT m.id FROM messages m
        WHERE m.direction = 'out' AND m.author IN ('bot', 'staff')
          AND (m.status = 'queued' OR (m.status = 'sending' AND m.lease_until < now()))
          AND (m.next_attempt_at IS NULL OR m.next_attempt_at <= now())
          AND NOT EXISTS (
              SELECT 1 FROM messages p
              WHERE p.conversation_id = m.conversation_id AND p.direction = 'out'
                AND p.id < m.id AND p.status IN ('queued', 'sending'))
        ORDER BY m.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
    RETURNING id, conversation_id, channel, author, text, citations, details, attempts
    """
)

_CONVERSATION = text(
    """
    SELECT c.mode, c.paused_until, c.last_inbound_at, k.external_id, k.locale
    FROM conversations c JOIN contacts k ON k.id = c.contact_id WHERE c.id = :id
    """
)


@dataclass(frozen=True)
class Claimed:
    id: int
    conversation_id: int
    channel: str
    kind: str
    text: str
    attempts: int


class Worker:
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
        self.adapters = adapters
        self.http = http
        self._database_url = database_url  # for LISTEN; None: poll only
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(max(1, settings.worker.concurrency))

    # -- the loop ---------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set; finishes the answers in hand before returning."""
        listener = asyncio.create_task(self._listen(stop)) if self._database_url else None
        tasks: set[asyncio.Task[None]] = set()
        try:
            while not stop.is_set():
                try:
                    did = await self.step(tasks)
                except (SQLAlchemyError, OSError) as exc:
                    # The database restarting or unreachable: wait and try again; nothing is
                    # lost (claims not made stay queued, claims made come back with the lease).
                    log.warning("worker cannot reach the database (%s); retrying", exc)
                    did = False
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
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)
            if listener is not None:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await listener

    async def step(self, tasks: set[asyncio.Task[None]] | None = None) -> bool:
        """Claim and start what can be done now; True if anything was claimed."""
        did = False
        # Replies first: they are ready, and a platform's window may be closing.
        while (out := await self._claim(_CLAIM_OUTBOUND)) is not None:
            did = True
            try:
                await self._deliver(out)
            except Exception as exc:  # a task boundary: one reply's failure stops nothing else
                log.exception("delivering message %s failed", out["id"])
                error = SendError(f"{type(exc).__name__}: {exc}", retryable=True)
                await self._send_failed(
                    int(out["id"]), str(out["channel"]), int(out["attempts"]), error
                )
        while not self._slots.locked():
            row = await self._claim(_CLAIM_INBOUND)
            if row is None:
                break
            did = True
            await self._slots.acquire()
            task = asyncio.create_task(self._answer_slot(_claimed(row)))
            if tasks is not None:
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            else:
                await task
        return did

    async def drain(self) -> None:
        """Answer and deliver everything queued now (tests, ``tuvan demo`` start-up)."""
        tasks: set[asyncio.Task[None]] = set()
        while await self.step(tasks) or tasks:
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _claim(self, query: Any) -> Mapping[str, Any] | None:
        async with self.sessionmaker.begin() as session:
            row = (await session.execute(query, {"lease": self.settings.worker.lease_s})).first()
        return dict(row._mapping) if row is not None else None

    async def _listen(self, stop: asyncio.Event) -> None:
        """Set the wake event on every NOTIFY; reconnect after a lost connection."""
        assert self._database_url is not None
        url = self._database_url.replace("postgresql+psycopg://", "postgresql://", 1)
        while not stop.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {INBOX_CHANNEL}")
                    await conn.execute(f"LISTEN {OUTBOX_CHANNEL}")
                    self._wake.set()  # anything queued while we were not listening
                    async for _ in conn.notifies():
                        self._wake.set()
            except psycopg.Error as exc:
                log.warning("LISTEN connection lost (%s); polling until it is back", exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 5)

    # -- answering --------------------------------------------------------------------------

    async def _answer_slot(self, claimed: Claimed) -> None:
        try:
            await self.answer(claimed)
        except Exception as exc:  # a task boundary: one message's failure stops nothing else
            log.exception("answering message %d failed", claimed.id)
            await self._retry_inbound(claimed, f"{type(exc).__name__}: {exc}")
        finally:
            self._slots.release()

    async def answer(self, claimed: Claimed) -> None:
        started = utcnow()
        async with self.sessionmaker() as session:
            conv = (await session.execute(_CONVERSATION, {"id": claimed.conversation_id})).one()
            previous = await previous_questions(
                session, claimed.conversation_id, claimed.id, self.settings.worker.history_turns
            )
        if not bot_may_answer(conv.mode, conv.paused_until, started):
            await self._finish_inbound(claimed, status="skipped", error="staff answering")
            METRICS.inc("tuvan_messages_skipped_total", channel=claimed.channel)
            return
        language = _language(claimed.text, conv.locale)
        question = None
        details: dict[str, Any] = {}
        tier = None
        wants_staff = False
        citations: list[dict[str, Any]] = []
        if claimed.kind in ("command", "follow"):
            reply_text = replies.greeting_reply(self.settings.contact, language)
        elif claimed.kind == "unsupported":
            reply_text = replies.text_only_reply(language)
        else:
            parts = self.answerer.parts
            question = await standalone_question(
                claimed.text, previous, parts.guard, parts.llm, parts.processor
            )
            typing = asyncio.create_task(self._keep_typing(claimed.channel, conv.external_id))
            try:
                answer = await self.answerer.answer(question)
            finally:
                typing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await typing
            reply_text = answer.answer
            tier = answer.tier
            wants_staff = answer.wants_staff
            citations = citations_json(answer.citations)
            details = {
                "scores": answer.scores,
                "timings_ms": answer.timings_ms,
                "reason": answer.reason,
                "faq_external_id": answer.faq_external_id,
                "quick_replies": _related_questions(answer.trace),
            }
            METRICS.inc("tuvan_answers_total", channel=claimed.channel, tier=answer.tier)
        stored = await self._store_reply(
            claimed, reply_text, tier, citations, details, question, wants_staff=wants_staff
        )
        if stored:
            METRICS.observe(
                "tuvan_answer_seconds",
                (utcnow() - started).total_seconds(),
                channel=claimed.channel,
            )

    async def _keep_typing(self, channel: str, external_user_id: str) -> None:
        adapter = self.adapters.get(channel)
        if adapter is None:
            return
        mark_seen = getattr(adapter, "mark_seen", None)  # Messenger: the question was read
        if mark_seen is not None:
            await mark_seen(self.http, external_user_id)
        while True:  # Telegram's typing lasts ~5 s; re-sent until the answer is ready
            await adapter.typing(self.http, external_user_id)
            await asyncio.sleep(4)

    async def _store_reply(
        self,
        claimed: Claimed,
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

    async def _finish_inbound(self, claimed: Claimed, *, status: str, error: str | None) -> None:
        async with self.sessionmaker.begin() as session:
            await session.execute(
                text(
                    "UPDATE messages SET status = CAST(:status AS message_status), "
                    "done_at = now(), error = :error, lease_until = NULL "
                    "WHERE id = :id AND status = 'answering' AND attempts = :attempts"
                ),
                {"id": claimed.id, "status": status, "error": error, "attempts": claimed.attempts},
            )

    async def _retry_inbound(self, claimed: Claimed, error: str) -> None:
        w = self.settings.worker
        if claimed.attempts >= w.max_attempts:
            await self._finish_inbound(claimed, status="failed", error=error[:1000])
            METRICS.inc("tuvan_messages_failed_total", channel=claimed.channel)
            return
        async with self.sessionmaker.begin() as session:
            await session.execute(
                text(
                    "UPDATE messages SET status = 'received', error = :error, lease_until = NULL, "
                    "next_attempt_at = :at WHERE id = :id AND attempts = :attempts"
                ),
                {
                    "id": claimed.id,
                    "error": error[:1000],
                    "at": utcnow() + timedelta(seconds=self.backoff(claimed.attempts)),
                    "attempts": claimed.attempts,
                },
            )

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Exponential backoff with full jitter; a platform's own retry-after wins if longer."""
        w = self.settings.worker
        delay = min(w.backoff_max_s, w.backoff_base_s * 2 ** max(0, attempt - 1))
        delay = random.uniform(delay / 2, delay)  # jitter, not a secret
        return max(delay, retry_after or 0.0)

    # -- delivering -------------------------------------------------------------------------

    async def _deliver(self, row: Mapping[str, Any]) -> None:
        message_id, channel = int(row["id"]), str(row["channel"])
        adapter = self.adapters.get(channel)
        async with self.sessionmaker() as session:
            conv = (await session.execute(_CONVERSATION, {"id": row["conversation_id"]})).one()
        if channel == "web":  # the browser reads replies from the store itself
            await self._finish_outbound(message_id, "sent", None)
            return
        if adapter is None:
            await self._finish_outbound(
                message_id, "undeliverable", f"channel {channel} is not set up"
            )
            return
        window = self._window_hours(channel)
        since = None if conv.last_inbound_at is None else utcnow() - conv.last_inbound_at
        human_agent = False
        if window is not None and (since is None or since > timedelta(hours=window)):
            staff_window = self._staff_window_hours(channel)
            if row["author"] == "staff" and since is not None and staff_window > window:
                human_agent = since <= timedelta(hours=staff_window)
            if not human_agent:
                await self._finish_outbound(
                    message_id, "undeliverable", f"outside the {window} h messaging window"
                )
                METRICS.inc("tuvan_sends_total", channel=channel, result="undeliverable")
                return
        details = row["details"] or {}
        reply = OutboundReply(
            external_user_id=conv.external_id,
            text=str(row["text"]),
            citations=tuple(
                ReplyCitation(int(c["n"]), str(c["title"]), c.get("url"))
                for c in row["citations"] or []
            ),
            quick_replies=tuple(details.get("quick_replies") or ())[: self._quick_replies(channel)],
            first_part=int(details.get("parts_sent") or 0),
            human_agent=human_agent,
        )
        try:
            result = await adapter.send(self.http, reply)
        except SendError as exc:
            await self._send_failed(message_id, channel, int(row["attempts"]), exc)
            return
        await self._finish_outbound(message_id, "sent", None, list(result.external_ids))
        METRICS.inc("tuvan_sends_total", channel=channel, result="sent")

    def _window_hours(self, channel: str) -> int | None:
        if channel == "messenger":
            return self.settings.messenger.window_hours
        if channel == "zalo":
            return self.settings.zalo.window_hours
        return None

    def _staff_window_hours(self, channel: str) -> int:
        """How long after the user's last message a person may still write (Messenger's
        HUMAN_AGENT tag); elsewhere the standard window holds for staff too."""
        if channel == "messenger":
            return self.settings.messenger.human_agent_hours
        return 0

    def _quick_replies(self, channel: str) -> int:
        return self.settings.messenger.quick_replies if channel == "messenger" else 0

    async def _send_failed(
        self, message_id: int, channel: str, attempts: int, exc: SendError
    ) -> None:
        log.warning("sending message %d on %s failed: %s", message_id, channel, exc)
        if exc.code == "outside_window":
            await self._finish_outbound(message_id, "undeliverable", str(exc))
            METRICS.inc("tuvan_sends_total", channel=channel, result="undeliverable")
        elif not exc.retryable or attempts >= self.settings.worker.max_attempts:
            await self._finish_outbound(message_id, "failed", str(exc))
            METRICS.inc("tuvan_sends_total", channel=channel, result="failed")
        else:
            async with self.sessionmaker.begin() as session:
                await session.execute(
                    text(
                        "UPDATE messages SET status = 'queued', error = :error, "
                        "lease_until = NULL, next_attempt_at = :at, "
                        "details = details || jsonb_build_object('parts_sent', :parts) "
                        "WHERE id = :id"
                    ),
                    {
                        "id": message_id,
                        "parts": exc.parts_sent,
                        "error": str(exc)[:1000],
                        "at": utcnow() + timedelta(seconds=self.backoff(attempts, exc.retry_after)),
                    },
                )
            METRICS.inc("tuvan_sends_total", channel=channel, result="retry")

    async def _finish_outbound(
        self, message_id: int, status: str, error: str | None, external_ids: list[str] | None = None
    ) -> None:
        async with self.sessionmaker.begin() as session:
            await session.execute(
                text(
                    "UPDATE messages SET status = CAST(:status AS message_status), error = :error, "
                    "done_at = now(), lease_until = NULL, "
                    "details = details || jsonb_build_object('external_ids', CAST(:ids AS jsonb)) "
                    "WHERE id = :id"
                ),
                {
                    "id": message_id,
                    "status": status,
                    "error": error[:1000] if error else None,
                    "ids": _json(external_ids or []),
                },
            )


def _claimed(row: Mapping[str, Any]) -> Claimed:
    return Claimed(
        id=int(row["id"]),
        conversation_id=int(row["conversation_id"]),
        channel=str(row["channel"]),
        kind=str(row["kind"]),
        text=str(row["text"]),
        attempts=int(row["attempts"]),
    )


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


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


async def _first(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
