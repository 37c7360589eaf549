"""The worker's prune schedule: ``bot.conversations.retention.prune`` every
``TUVAN_RETENTION__PRUNE_EVERY_HOURS`` (0: never), beside the answering loop.

Every worker process runs this task; the prune's advisory lock lets one prune at a time, and a
worker that finds the lock taken waits for its next turn. The first prune comes
``first_delay_s`` after start-up (a burst of restarts does not prune each time), then one per
interval. A failed prune is logged and tried again at the next turn: it never stops the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.conversations.retention import prune
from bot.core.settings import RetentionSettings

log = logging.getLogger(__name__)

FIRST_DELAY_S = 300.0


async def run_prune_schedule(
    policy: RetentionSettings,
    sessionmaker: async_sessionmaker[AsyncSession],
    engine: AsyncEngine,
    stop: asyncio.Event,
    *,
    first_delay_s: float = FIRST_DELAY_S,
) -> int:
    """Prune on schedule until ``stop`` is set; the number of prunes this task ran."""
    interval_s = policy.prune_every_hours * 3600
    if interval_s <= 0:
        return 0
    ran = 0
    delay = min(first_delay_s, interval_s)
    while not await _stopped_within(stop, delay):
        delay = interval_s
        try:
            report = await prune(sessionmaker, engine, policy)
        except Exception:  # a task boundary: the next turn tries again
            log.exception("the scheduled prune failed; trying again in %.0f s", interval_s)
            continue
        if report is None:
            log.info("another process is pruning; skipping this turn")
            continue
        ran += 1
        log.info("pruned: %s", "; ".join(report.lines()))
    return ran


async def _stopped_within(stop: asyncio.Event, seconds: float) -> bool:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    return stop.is_set()
