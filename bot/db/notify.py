"""Waiting on PostgreSQL notifications: one connection that LISTENs on some channels for as long
as its task runs, and reconnects after a loss. The worker waits on its queues this way, and the
web chat on staff replies; both also poll, so a lost connection delays work and loses none."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import psycopg

log = logging.getLogger(__name__)

RECONNECT_S = 5.0  # between attempts to get a lost LISTEN connection back


def listen_url(url: str) -> str:
    """An engine's address (``render_as_string(hide_password=False)``) as psycopg takes it."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _nothing() -> None:
    return None


async def listen(
    url: str,
    channels: Sequence[str],
    *,
    on_listening: Callable[[], None],
    on_notify: Callable[[str], None],
    on_lost: Callable[[], None] = _nothing,
    who: str = "LISTEN",
) -> None:
    """LISTEN on ``channels`` until cancelled: ``on_listening`` each time the connection is (again)
    up, so that what came while nobody listened is looked at; ``on_notify`` with each payload;
    ``on_lost`` when the connection goes (or anything else goes wrong: the loop ends only when
    cancelled), before waiting ``RECONNECT_S`` to try again."""
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(
                listen_url(url), autocommit=True
            ) as conn:
                for channel in channels:
                    await conn.execute(f"LISTEN {channel}")
                on_listening()
                async for note in conn.notifies():
                    on_notify(note.payload)
        except psycopg.Error as exc:
            log.warning("%s: connection lost (%s); polling until it is back", who, exc)
        except Exception:  # a callback's or a library's bug must not end the loop for good
            log.exception("%s: the LISTEN loop failed; polling, listening again shortly", who)
        on_lost()
        await asyncio.sleep(RECONNECT_S)
