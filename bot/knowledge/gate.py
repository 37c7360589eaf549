"""`IngestGate`: how many ingestions one process runs at a time.

Loading a document (PDF parsing, rendering, OCR) and embedding its chunks run in threads, off the
event loop, but they still take a core and hundreds of megabytes each. Five uploads at once
would take every core and several gigabytes from `serve`, whose event loop must keep answering
webhooks. So every ingestion in a process passes one gate (held by `bot.runtime.Runtime`,
sized by ``ingest.concurrency``, 1 by default); the others wait their turn, first come first
served.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class IngestGate:
    """At most `limit` ingestions at a time; `running` and `waiting` say how many are where."""

    def __init__(self, limit: int = 1) -> None:
        if limit < 1:
            raise ValueError(f"an ingest gate needs at least one slot, not {limit}")
        self.limit = limit
        # asyncio primitives bind to the running loop on first use, not here.
        self._slots = asyncio.Semaphore(limit)
        self.running = 0
        self.waiting = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the gate's slots for the body, waiting for one if all are taken."""
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
            self._slots.release()
