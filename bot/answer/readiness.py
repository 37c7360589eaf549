"""Tier 1 kept ready: its calibration made before a student's question needs it.

Tier 1's threshold is calibrated on the FAQ as it is (retrieval.faq.judge): every stored
phrasing weighed against the other entries, once per FAQ version and process. Made on demand,
the first question after start-up or after staff change the FAQ waits for it (seconds on a
large FAQ). Each web and worker process therefore runs ``keep_tier_one_ready`` beside its work:
it makes the judge at start and then looks every few seconds whether the FAQ changed, which
costs one primary-key read when it did not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy.exc import SQLAlchemyError

from bot.answer.lookup import Lookup
from retrieval.facts.book import current_book

log = logging.getLogger(__name__)

EVERY_S = 10.0  # how often a process looks whether the FAQ changed


async def keep_tier_one_ready(
    answerer: Lookup, stop: asyncio.Event, every_s: float = EVERY_S
) -> None:
    """Make tier 1's judge for the current FAQ now, and again after each change, until
    ``stop`` (always at least once). A database that cannot be reached is logged and tried
    again; questions then make the judge themselves, as without this."""
    while True:
        try:
            async with answerer.sessionmaker() as session:
                # The guard questions will use: the one told the catalogue's majors and
                # campuses (a judge is made per guard, so one made with an older guard is of
                # no use to the next question, which would calibrate again).
                answerer.parts.read_catalogue(await current_book(session))
                await answerer.judge(session)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("tier 1 calibration: the database is not reachable (%s); retrying", exc)
        if stop.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)
        if stop.is_set():
            return
