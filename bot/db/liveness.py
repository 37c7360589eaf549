"""Is a pooled connection still alive? Asked at every checkout, without a round trip.

SQLAlchemy's ``pool_pre_ping`` sends ``SELECT 1`` before every use of a pooled connection: a
round trip as long as the statement it guards, on every webhook (the statement itself is one
round trip) and every step of the worker. A connection idle in the pool is sent nothing by the
server (pooled connections do not LISTEN), unless the server is closing it (a restart, an
administrator's ``pg_terminate_backend``, an idle timeout): then its socket holds the server's
last message and the end of the stream. So the check polls the socket without waiting, and a
connection with anything to read is refused, which makes the pool open a new one (SQLAlchemy's
documented pessimistic disconnect handling); at worst a stray message costs one reconnect. A
connection broken while nothing reached it (a network cut) fails at its next statement, as it
would have between a ping and that statement anyway.
"""

from __future__ import annotations

import select
from typing import Any

from psycopg import OperationalError, pq
from sqlalchemy import event, exc
from sqlalchemy.ext.asyncio import AsyncEngine

_WAITING = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP


def check_on_checkout(engine: AsyncEngine) -> None:
    """Refuse, at checkout, pooled connections the server has closed (``is_alive``)."""
    event.listen(engine.sync_engine, "checkout", _checkout)


def _checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    driver = getattr(dbapi_connection, "driver_connection", None)
    pgconn = getattr(driver, "pgconn", None)
    if pgconn is not None and not is_alive(pgconn):
        raise exc.DisconnectionError("the server closed this pooled connection")


def is_alive(pgconn: pq.abc.PGconn) -> bool:
    """False when libpq knows the connection broken, or the server has sent it something while
    it sat idle (its goodbye)."""
    if pgconn.status != pq.ConnStatus.OK:
        return False
    try:
        poller = select.poll()
        poller.register(pgconn.socket, _WAITING)
        return not poller.poll(0)
    except (OperationalError, OSError, ValueError):
        return False
