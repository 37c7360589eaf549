"""Token buckets in PostgreSQL, so that every serve process counts against the same limit.

A bucket holds up to ``burst`` tokens and gains ``per_minute`` a minute; a request takes one,
or is refused with the seconds until one is back. A row stores only the time the bucket is full
again (``full_at``; the "theoretical arrival time" of GCRA, the same limit as a token bucket):
taking a token moves it on by one interval, ``60 / per_minute`` seconds, from itself or from
now, whichever is later, and is allowed while that stays within ``burst`` intervals of now. So a
check is one upsert that reads the database's clock, whatever the number of processes, and a
row whose ``full_at`` has passed is the same as no row: pruning it changes no limit.

Functions take the session first and never commit: the caller owns the transaction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession


@dataclass(frozen=True)
class RateLimit:
    per_minute: float
    burst: int

    @property
    def interval_s(self) -> float:
        """The time one token takes to come back."""
        return 60.0 / self.per_minute


# EXCLUDED.full_at is "now + one interval" (the row a first request inserts), so the update
# needs no second clock reading: greatest(stored + interval, now + interval) is the bucket's
# next full_at, allowed while it is at most now + burst intervals. A refused request changes
# nothing (the WHERE), and the outer query reads the row as it stood to say how long to wait.
_TAKE = text(
    """
    WITH clock AS (SELECT clock_timestamp() AS now),
    taken AS (
        INSERT INTO rate_buckets AS b (key, full_at)
        SELECT :key, now + make_interval(secs => :interval) FROM clock
        ON CONFLICT (key) DO UPDATE
        SET full_at = greatest(b.full_at + make_interval(secs => :interval), EXCLUDED.full_at)
        WHERE greatest(b.full_at + make_interval(secs => :interval), EXCLUDED.full_at)
              <= EXCLUDED.full_at + make_interval(secs => :headroom)
        RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM taken) AS allowed,
           (SELECT extract(epoch FROM b.full_at - clock.now) FROM rate_buckets b, clock
            WHERE b.key = :key) AS ahead_s
    """
)

# A few hundred full buckets at a time, skipping rows a check holds: cheap on the index, and
# never in a check's way.
_PRUNE = text(
    """
    DELETE FROM rate_buckets WHERE key IN (
        SELECT key FROM rate_buckets WHERE full_at < clock_timestamp()
        ORDER BY full_at LIMIT :batch FOR UPDATE SKIP LOCKED
    )
    """
)


async def take_token(session: AsyncSession, key: str, limit: RateLimit) -> float | None:
    """Take a token from the bucket ``key``: None when allowed, else the seconds to wait."""
    row = (
        await session.execute(
            _TAKE,
            {
                "key": key,
                "interval": limit.interval_s,
                "headroom": (limit.burst - 1) * limit.interval_s,
            },
        )
    ).one()
    if row.allowed:
        return None
    # The row as this statement's snapshot saw it: a bucket another process emptied a moment
    # later is not in it, and then one interval is the honest guess.
    ahead_s = float(row.ahead_s) if row.ahead_s is not None else limit.burst * limit.interval_s
    return max(ahead_s - (limit.burst - 1) * limit.interval_s, 0.0)


async def prune_full_buckets(session: AsyncSession, *, batch: int = 500) -> int:
    """Delete up to ``batch`` buckets that are full again (the same as no row); how many."""
    result = await session.execute(_PRUNE, {"batch": batch})
    return int(getattr(result, "rowcount", 0) or 0)


def retry_after(wait_s: float) -> str:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait_s)))


class RateLimiter:
    """Checks requests against buckets; every ``prune_every``-th check of this process also
    prunes full buckets, so idle rows go without a schedule of their own."""

    def __init__(self, *, prune_every: int = 200) -> None:
        self.prune_every = prune_every
        self._checks = 0

    async def take(self, session: AsyncSession, key: str, limit: RateLimit) -> float | None:
        """``take_token``, pruning now and then; None when allowed, else the seconds to wait."""
        self._checks += 1
        if self._checks % self.prune_every == 0:
            await prune_full_buckets(session)
        return await take_token(session, key, limit)
