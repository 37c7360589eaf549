"""Holding a claim while its work runs: the lease renewed, the work bounded in time.

A claim's lease (``bot.conversations.queue``) says how soon a message comes back to the queue
when its claimer dies. A claimer that is alive but slow (an LLM slower than the lease, a
platform that hangs) keeps its claim by renewing the lease every third of it, fenced on the
claim: once the claim is lost (the lease ran out anyway, say the database was unreachable, and
another worker took the message) the work is cancelled, since its result would be dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import TypeVar

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.queue import Claim, renew_lease

log = logging.getLogger(__name__)

T = TypeVar("T")

RENEWALS_PER_LEASE = 3  # a renewal that fails (a database hiccup) still leaves two more


class ClaimLostError(Exception):
    """Another claimer holds the message now: this claim's work stopped, its result dropped."""


class WorkTimeoutError(Exception):
    """The work outlasted its time limit and was cancelled."""


async def hold_while(
    work: Awaitable[T],
    claim: Claim,
    sessionmaker: async_sessionmaker[AsyncSession],
    lease_s: float,
    timeout_s: float | None = None,
) -> T:
    """Run ``work`` while renewing ``claim``'s lease; cancel it and raise ``ClaimLostError``
    if the claim is lost, ``WorkTimeoutError`` after ``timeout_s``. Cancelling the caller
    cancels the work."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    deadline = None if timeout_s is None else loop.time() + timeout_s
    every = lease_s / RENEWALS_PER_LEASE
    try:
        while True:
            wait = every if deadline is None else min(every, max(0.0, deadline - loop.time()))
            await asyncio.wait({task}, timeout=wait)
            if task.done():
                return task.result()
            if deadline is not None and loop.time() >= deadline:
                raise WorkTimeoutError(f"no result after {timeout_s:g} s")
            if not await _renew(claim, sessionmaker, lease_s):
                raise ClaimLostError(f"message {claim.id} was claimed again meanwhile")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _renew(
    claim: Claim, sessionmaker: async_sessionmaker[AsyncSession], lease_s: float
) -> bool:
    """True while the claim holds; a database error is no proof of loss (the lease may still
    run; the next renewal, or the fenced store at the end, decides)."""
    try:
        async with sessionmaker.begin() as session:
            return await renew_lease(session, claim, lease_s)
    except (SQLAlchemyError, OSError) as exc:
        log.warning("renewing the lease of message %d failed (%s)", claim.id, exc)
        return True
