"""The LISTEN loop (bot.db.notify) on the test's PostgreSQL: it survives any error, says so,
and listens again."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import psycopg
import pytest

from bot.db import notify
from tests.waiting import until

CHANNEL = "tuvan_test_notify"


async def test_a_failing_callback_does_not_end_the_loop(
    database_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(notify, "RECONNECT_S", 0.05)
    received: list[str] = []
    listening = asyncio.Event()
    lost: list[bool] = []

    def on_notify(payload: str) -> None:
        if payload == "bad":
            raise ValueError("a bug in a callback")
        received.append(payload)

    task = asyncio.create_task(
        notify.listen(
            database_url,
            (CHANNEL,),
            on_listening=listening.set,
            on_notify=on_notify,
            on_lost=lambda: (lost.append(True), listening.clear()),
            who="test",
        )
    )
    try:
        async with await psycopg.AsyncConnection.connect(
            notify.listen_url(database_url), autocommit=True
        ) as conn:
            with caplog.at_level(logging.ERROR, logger="bot.db.notify"):
                await asyncio.wait_for(listening.wait(), 10)
                await conn.execute(f"NOTIFY {CHANNEL}, 'bad'")
                await until(lambda: bool(lost))
                await asyncio.wait_for(listening.wait(), 10)  # listening again
                await conn.execute(f"NOTIFY {CHANNEL}, 'good'")
                await until(lambda: received == ["good"])
        assert "the LISTEN loop failed" in caplog.text
        assert not task.done()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
