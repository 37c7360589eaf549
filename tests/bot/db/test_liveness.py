"""Pooled connections checked at checkout without a round trip (bot.db.liveness): one the server
closed is replaced, a live one is kept. A real server (the session's), real connections."""

from __future__ import annotations

import asyncio

import psycopg
from sqlalchemy import text

from bot.db.engine import make_engine
from bot.db.liveness import is_alive


async def backend_pid(engine_url: str, engine: object) -> int:
    async with engine.connect() as conn:  # type: ignore[attr-defined]
        return int((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def test_a_pooled_connection_the_server_closed_is_replaced(database_url: str) -> None:
    engine = make_engine(database_url, pool_size=1)
    admin = make_engine(database_url, pool_size=1)
    try:
        first = await backend_pid(database_url, engine)  # now idle in the pool
        async with admin.connect() as conn:
            await conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": first})
        await asyncio.sleep(0.2)  # the server's goodbye reaches the socket

        second = await backend_pid(database_url, engine)  # no error: a new connection

        assert second != first
    finally:
        await engine.dispose()
        await admin.dispose()


async def test_a_live_pooled_connection_is_kept(database_url: str) -> None:
    engine = make_engine(database_url, pool_size=1)
    try:
        pids = {await backend_pid(database_url, engine) for _ in range(5)}

        assert len(pids) == 1  # no reconnect, no ping needed
    finally:
        await engine.dispose()


async def test_is_alive_reads_what_the_server_sent(database_url: str) -> None:
    dsn = database_url.replace("postgresql+psycopg://", "postgresql://")
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    other = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        assert is_alive(conn.pgconn)
        await other.execute("SELECT pg_terminate_backend(%s)", [conn.pgconn.backend_pid])
        await asyncio.sleep(0.2)

        assert not is_alive(conn.pgconn)
    finally:
        await conn.close()
        await other.close()
        assert not is_alive(conn.pgconn)  # closed here: known without reading
