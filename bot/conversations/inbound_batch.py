"""Webhooks arriving together stored together: one transaction, one round trip, one commit.

In the results week thousands of updates a second reach ``serve``. Stored one by one, each
single-event webhook costs a pool checkout, a statement sent on its own (a system call that
wakes PostgreSQL), a commit (a WAL flush) and a NOTIFY; half of ``serve``'s time went to
sending. ``InboundBatcher`` queues the webhooks' events as they come; one task stores whatever
is queued in a single transaction, the statements pipelined (psycopg's ``executemany`` with
``returning``: sent together, results read in order), while the next requests queue behind it.
A lone webhook on a quiet day is stored at once, as before: nothing waits for a batch to fill.

Each event is still ``RECORD_INBOUND``'s one statement, run in the order the events arrived, so
every rule holds (once per event id, the per-conversation caps, the waiting notice); the
workers are notified once per batch (PostgreSQL folds a transaction's identical NOTIFYs). If
the batch fails, nothing of it was stored, and each event is stored on its own as before
(``record_inbound``): an event the database refuses for what it holds fails alone, and a
database outage reaches each caller as SQLAlchemy's error (the webhook's 503).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from bot.conversations.inbound import (
    RECORD_INBOUND,
    Recorded,
    inbound_params,
    record_inbound,
    recorded,
)
from bot.core.messages import InboundMessage

log = logging.getLogger(__name__)

MAX_BATCH = 64  # events in one transaction: a larger batch holds its row locks longer


@dataclass
class _Queued:
    message: InboundMessage
    params: dict[str, Any]
    max_pending: int
    flood: int
    done: asyncio.Future[Recorded]


class InboundBatcher:
    """Stores single inbound events for many concurrent callers, in batches (one per process)."""

    def __init__(self, engine: AsyncEngine, *, max_batch: int = MAX_BATCH) -> None:
        self.engine = engine
        self.max_batch = max_batch
        self._queue: list[_Queued] = []
        self._task: asyncio.Task[None] | None = None
        self._sql = str(RECORD_INBOUND.compile(dialect=engine.dialect))
        self.batches = 0  # transactions run (for tests and the bench)
        self.fallbacks = 0  # batches the database refused, stored event by event instead

    async def record(
        self, message: InboundMessage, *, max_pending: int = 0, flood: int = 0
    ) -> Recorded:
        """``record_inbound(message, ...)``, stored in the next batch."""
        params = inbound_params(message, max_pending=max_pending, flood=flood)
        done: asyncio.Future[Recorded] = asyncio.get_running_loop().create_future()
        self._queue.append(_Queued(message, params, max_pending, flood, done))
        if self._task is None:
            self._task = asyncio.create_task(self._drain(), name="inbound-batcher")
        return await done

    async def close(self) -> None:
        """Wait for what is queued to be stored (the app's clean-up, before the engine goes)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _drain(self) -> None:
        batch: list[_Queued] = []
        try:
            while self._queue:
                batch = self._queue[: self.max_batch]
                del self._queue[: self.max_batch]
                # Rows are locked in one order by every batch (contacts and conversations are
                # upserted), so two processes' batches never wait on each other in a cycle; the
                # sort is stable, so a conversation's events keep the order they came in.
                batch.sort(key=lambda q: (q.params["channel"], q.params["user"]))
                await self._store(batch)
        except asyncio.CancelledError:  # the process stops: its callers are told, not left
            for queued in [*batch, *self._queue]:
                queued.done.cancel()
            self._queue.clear()
            raise
        finally:
            # No await between the queue found empty and this: an event queued meanwhile
            # would have started a task of its own, or been seen by the loop above.
            self._task = None

    async def _store(self, batch: list[_Queued]) -> None:
        try:
            rows = await self._together([q.params for q in batch])
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # nothing of the batch was stored: each on its own
            self.fallbacks += 1
            if len(batch) > 1:
                log.info(
                    "a batch of %d inbound events failed, stored one by one: %s", len(batch), exc
                )
            for queued in batch:
                await self._alone(queued)
            return
        self.batches += 1
        for queued, row in zip(batch, rows, strict=True):
            if not queued.done.done():  # its caller may have gone (a client that hung up)
                queued.done.set_result(row)

    async def _together(self, params: list[dict[str, Any]]) -> list[Recorded]:
        async with self.engine.connect() as conn:
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            driver = (await auto.get_raw_connection()).driver_connection
            if driver is None:
                raise RuntimeError("the pooled connection has no driver connection")
            async with driver.transaction(), driver.cursor() as cursor:
                await cursor.executemany(self._sql, params, returning=True)
                rows = []
                while True:
                    row = await cursor.fetchone()
                    if row is None:
                        raise RuntimeError("a statement of the batch returned no row")
                    rows.append(recorded(row[0], row[1], row[2], row[3]))
                    if not cursor.nextset():
                        break
        if len(rows) != len(params):
            raise RuntimeError(f"{len(params)} events sent, {len(rows)} rows back")
        return rows

    async def _alone(self, queued: _Queued) -> None:
        try:
            async with self.engine.connect() as conn:
                auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
                result = await record_inbound(
                    auto,
                    queued.message,
                    now=queued.params["now"],
                    max_pending=queued.max_pending,
                    flood=queued.flood,
                )
        except Exception as exc:
            if not queued.done.done():
                queued.done.set_exception(exc)
            return
        if not queued.done.done():
            queued.done.set_result(result)
