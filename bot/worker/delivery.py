"""Delivering queued replies: through the channel's adapter, within what the adapter allows.

The messaging window, the staff window, the number of quick replies and the typing indicator
are asked of the adapter (``Capabilities``); a channel whose client reads replies from the store
(the web chat) has nothing to send. A failed send is retried with backoff, resuming after the
parts already delivered (recorded after each part), until ``max_attempts``; a permanent failure
or a closed window ends it. Every update is fenced on the claim: a sender that lost its claim
changes nothing. Delivery is at least once: a reply in flight when its worker dies may be sent
again (from its first part not recorded); the platforms have no idempotency key.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import timedelta

import aiohttp
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from adapters.interface import Adapter
from bot.channels.wiring import capabilities_of
from bot.conversations.queue import (
    ClaimedOutbound,
    finish_outbound,
    record_parts_sent,
    release_outbound,
    retry_outbound,
)
from bot.conversations.store import conversation_state
from bot.core.clock import utcnow
from bot.core.errors import SendError
from bot.core.messages import OutboundReply, ReplyCitation
from bot.core.metrics import METRICS
from bot.core.settings import WorkerSettings
from bot.worker.lease import ClaimLostError, hold_while

log = logging.getLogger(__name__)

TYPING_EVERY_S = 4  # Telegram's typing lasts ~5 s: sent again until the answer is ready


def backoff(settings: WorkerSettings, attempt: int, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter; a platform's own retry-after wins if longer."""
    delay = min(settings.backoff_max_s, settings.backoff_base_s * 2 ** max(0, attempt - 1))
    delay = random.uniform(delay / 2, delay)  # jitter, not a secret
    return max(delay, retry_after or 0.0)


class Delivery:
    """Sends claimed replies and shows typing, on the process's adapters and client session.

    Each reply is sent in a task of its own, at most ``send_concurrency`` per channel: a
    platform that hangs holds its own channel's senders, not the other channels nor the
    answering. A sender holds its claim (``hold_while``) and records every part delivered."""

    def __init__(
        self,
        settings: WorkerSettings,
        sessionmaker: async_sessionmaker[AsyncSession],
        adapters: Mapping[str, Adapter],
        http: aiohttp.ClientSession,
        on_done: Callable[[], None] = lambda: None,
    ) -> None:
        self.settings = settings
        self.sessionmaker = sessionmaker
        self.adapters = adapters
        self.http = http
        self.running: set[asyncio.Task[None]] = set()
        self._in_flight: Counter[str] = Counter()
        self._on_done = on_done  # a sender is free again: the loop may claim another reply

    def busy_channels(self) -> list[str]:
        """The channels whose senders are all taken: no reply of theirs is claimed now."""
        cap = self.settings.send_concurrency
        return sorted(channel for channel, n in self._in_flight.items() if n >= cap)

    def start(self, claim: ClaimedOutbound) -> asyncio.Task[None]:
        """Send ``claim`` in a task of its channel's pool (the caller checked it has room)."""
        self._in_flight[claim.channel] += 1
        task = asyncio.create_task(self.deliver(claim))
        self.running.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self.running.discard(finished)
            self._in_flight[claim.channel] -= 1
            self._on_done()

        task.add_done_callback(done)
        return task

    async def stop(self) -> None:
        """On shutdown: replies under way get ``shutdown_grace_s`` to finish; the rest are
        cancelled and given back to the queue for the next worker."""
        if self.running:
            await asyncio.wait(set(self.running), timeout=self.settings.shutdown_grace_s)
        for task in set(self.running):
            task.cancel()
        if self.running:
            await asyncio.gather(*self.running, return_exceptions=True)

    async def deliver(self, claim: ClaimedOutbound) -> None:
        """Send one reply and record the outcome; any failure is a retry, never a crash."""
        try:
            await hold_while(self._send(claim), claim, self.sessionmaker, self.settings.lease_s)
        except ClaimLostError as exc:
            log.warning("sending message %d stopped: %s", claim.id, exc)
        except asyncio.CancelledError:
            await asyncio.shield(self._release(claim))
            raise
        except Exception as exc:  # a task boundary: one reply's failure stops nothing else
            log.exception("delivering message %s failed", claim.id)
            error = SendError(f"{type(exc).__name__}: {exc}", retryable=True)
            await self._send_failed(claim, error)

    async def keep_typing(self, channel: str, external_user_id: str) -> None:
        """Show that an answer is coming, until cancelled (where the channel can show it)."""
        adapter = self.adapters.get(channel)
        if adapter is None or not adapter.capabilities.typing:
            return
        if adapter.capabilities.read_receipts:  # Messenger: the question was read
            await adapter.mark_seen(self.http, external_user_id)
        while True:
            await adapter.typing(self.http, external_user_id)
            await asyncio.sleep(TYPING_EVERY_S)

    async def _send(self, claim: ClaimedOutbound) -> None:
        channel = claim.channel
        capabilities = capabilities_of(self.adapters, channel)
        async with self.sessionmaker() as session:
            conv = await conversation_state(session, claim.conversation_id)
        if capabilities is not None and not capabilities.delivers:
            await self._finish(claim, "sent", None)  # the client reads it from the store
            return
        adapter = self.adapters.get(channel)
        if adapter is None or capabilities is None:
            await self._finish(claim, "undeliverable", f"channel {channel} is not set up")
            return
        window = capabilities.window_hours
        since = None if conv.last_inbound_at is None else utcnow() - conv.last_inbound_at
        human_agent = False
        if window is not None and (since is None or since > timedelta(hours=window)):
            staff_window = capabilities.staff_window_hours
            if claim.author == "staff" and since is not None and staff_window > window:
                human_agent = since <= timedelta(hours=staff_window)
            if not human_agent:
                await self._finish(
                    claim, "undeliverable", f"outside the {window} h messaging window"
                )
                METRICS.inc("tuvan_sends_total", channel=channel, result="undeliverable")
                return
        details = claim.details
        reply = OutboundReply(
            external_user_id=conv.external_id,
            text=claim.text,
            citations=tuple(
                ReplyCitation(int(c["n"]), str(c["title"]), c.get("url")) for c in claim.citations
            ),
            quick_replies=(
                tuple(details.get("quick_replies") or ())[: capabilities.quick_replies]
                or tuple(details.get("suggestions") or ())[: capabilities.suggestions]
            ),
            first_part=int(details.get("parts_sent") or 0),
            human_agent=human_agent,
            # The bot's answers carry 👍/👎 buttons; greetings and staff replies do not.
            feedback_id=claim.id if claim.author == "bot" and claim.tier is not None else None,
            language="en" if details.get("language") == "en" else "vi",
            on_part_sent=lambda parts_sent: self._record_parts(claim, parts_sent),
        )
        try:
            result = await adapter.send(self.http, reply)
        except SendError as exc:
            await self._send_failed(claim, exc)
            return
        await self._finish(claim, "sent", None, result.external_ids)
        METRICS.inc("tuvan_sends_total", channel=channel, result="sent")

    async def _send_failed(self, claim: ClaimedOutbound, exc: SendError) -> None:
        channel = claim.channel
        log.warning("sending message %d on %s failed: %s", claim.id, channel, exc)
        if exc.code == "outside_window":
            await self._finish(claim, "undeliverable", str(exc))
            METRICS.inc("tuvan_sends_total", channel=channel, result="undeliverable")
        elif not exc.retryable or claim.attempts >= self.settings.max_attempts:
            await self._finish(claim, "failed", str(exc))
            METRICS.inc("tuvan_sends_total", channel=channel, result="failed")
        else:
            at = utcnow() + timedelta(
                seconds=backoff(self.settings, claim.attempts, exc.retry_after)
            )
            async with self.sessionmaker.begin() as session:
                held = await retry_outbound(session, claim, str(exc), exc.parts_sent, at)
            if held:
                METRICS.inc("tuvan_sends_total", channel=channel, result="retry")
            else:
                log.warning("message %d was claimed again meanwhile; retry not recorded", claim.id)

    async def _finish(
        self,
        claim: ClaimedOutbound,
        status: str,
        error: str | None,
        external_ids: tuple[str, ...] = (),
    ) -> None:
        async with self.sessionmaker.begin() as session:
            held = await finish_outbound(session, claim, status, error, external_ids)
        if not held:
            log.warning(
                "message %d was claimed again meanwhile; its outcome %r not recorded",
                claim.id,
                status,
            )

    async def _record_parts(self, claim: ClaimedOutbound, parts_sent: int) -> None:
        """After each part a platform accepted: recorded, so a retry resumes after it."""
        async with self.sessionmaker.begin() as session:
            held = await record_parts_sent(session, claim, parts_sent, self.settings.lease_s)
        if not held:
            raise ClaimLostError(f"message {claim.id} was claimed again after part {parts_sent}")

    async def _release(self, claim: ClaimedOutbound) -> None:
        try:
            async with self.sessionmaker.begin() as session:
                await release_outbound(session, claim)
        except (SQLAlchemyError, OSError) as exc:  # the lease brings it back anyway
            log.warning("giving message %d back to the queue failed (%s)", claim.id, exc)
