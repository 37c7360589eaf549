"""What wakes an open web chat: a staff reply stored in the visitor's conversation.

The page long-polls ``GET /api/chat/updates?since=<message id>`` (the visitor id in the
``X-Visitor-Id`` header). The request answers at once when the conversation has a message after
``since``, else it is held until one arrives or ``TUVAN_WEB__UPDATES_WAIT_S`` pass, and the page
asks again. So a staff reply shows within a moment of being sent, whatever the student does, and
an open page costs one idle connection and one indexed query per wait, not a query every few
seconds.

A staff reply may be sent through any serve process, and the page may be held by any other:
``queue_staff_reply`` sends ``NOTIFY tuvan_conversation, '<conversation id>'`` in its
transaction, and each serve process keeps one connection that LISTENs to it (``ReplyWatch``)
and wakes the requests held for that conversation. While that connection is down, a held
request waits at most ``FALLBACK_WAIT_S`` and then looks at the database itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.conversations.queue import CONVERSATION_CHANNEL
from bot.db.notify import listen
from bot.web.webchat.answering import CHANNEL

FALLBACK_WAIT_S = 3.0  # a held request's longest wait while nothing LISTENs

_NEWEST_AFTER = text(
    """
    SELECT c.id AS conversation_id,
           (SELECT max(m.id) FROM messages m
             WHERE m.conversation_id = c.id AND m.id > :since AND m.kind = 'text') AS newest
    FROM conversations c JOIN contacts k ON k.id = c.contact_id
    WHERE k.channel = :channel AND k.external_id = :visitor
    """
)


@dataclass(frozen=True)
class Newest:
    """A visitor's conversation, and its newest message after the page's cursor (None: none)."""

    conversation_id: int | None  # None: the visitor has not written yet
    newest: int | None


async def newest_after(session: AsyncSession, visitor_id: str, since: int) -> Newest:
    """One indexed look at the visitor's conversation: its newest text message after ``since``."""
    row = (
        await session.execute(
            _NEWEST_AFTER, {"since": since, "channel": CHANNEL, "visitor": visitor_id}
        )
    ).one_or_none()
    if row is None:
        return Newest(None, None)
    return Newest(int(row.conversation_id), None if row.newest is None else int(row.newest))


class ReplyWatch:
    """The requests held per conversation, woken by NOTIFY from any process."""

    def __init__(self) -> None:
        self._held: dict[int, set[asyncio.Event]] = {}
        # The count of notifications so far, and the count at each conversation's last one: a
        # request compares them to catch a reply notified while it was reading the database.
        # One entry per conversation staff replied in: a human-sized table.
        self.generation = 0
        self._notified_at: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._closing = False

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    @property
    def held(self) -> int:
        """How many requests are waiting now."""
        return sum(len(events) for events in self._held.values())

    def start(self, url: str) -> None:
        self._closing = False
        self._task = asyncio.create_task(
            listen(
                url,
                (CONVERSATION_CHANNEL,),
                on_listening=self._on_listening,
                on_notify=self._on_notify,
                on_lost=self._listening.clear,
                who="web chat",
            )
        )

    async def ready(self) -> None:
        """Wait until the LISTEN connection is up (the caller bounds the wait)."""
        await self._listening.wait()

    async def stop(self) -> None:
        """Let every held request go (it answers "nothing new") and close the connection."""
        self._closing = True
        self.wake_all()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._listening.clear()

    def wake(self, conversation_id: int) -> None:
        self.generation += 1
        self._notified_at[conversation_id] = self.generation
        for event in self._held.get(conversation_id, ()):
            event.set()

    def wake_all(self) -> None:
        for events in self._held.values():
            for event in events:
                event.set()

    @contextlib.contextmanager
    def holding(self, conversation_id: int, since_generation: int) -> Iterator[asyncio.Event]:
        """An event set when this conversation is notified, already set if it was after
        ``since_generation`` (the ``generation`` read before the caller looked at the database)
        or the server is stopping. Conversation 0 (none yet) is woken only by stopping."""
        event = asyncio.Event()
        if self._closing or self._notified_at.get(conversation_id, 0) > since_generation:
            event.set()
        self._held.setdefault(conversation_id, set()).add(event)
        try:
            yield event
        finally:
            events = self._held.get(conversation_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._held[conversation_id]

    def wait_limit(self, wait_s: float) -> float:
        """How long a held request may wait: the full wait only while NOTIFY can wake it."""
        return wait_s if self.listening else min(wait_s, FALLBACK_WAIT_S)

    def _on_listening(self) -> None:
        self._listening.set()
        self.wake_all()  # whatever was stored while nothing listened

    def _on_notify(self, payload: str) -> None:
        if payload.isdigit():
            self.wake(int(payload))
