"""Alembic environment (async, psycopg 3).

tuvan calls migrations with an open connection in ``config.attributes["connection"]``
(bot.db.migrate); the plain ``alembic`` command gets its URL from tuvan's settings.
"""

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from bot.db.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_settings() -> None:
    from bot.core.settings import Settings
    from bot.db.engine import database_url, engine_for

    with database_url(Settings()) as url:
        async with engine_for(url) as engine, engine.connect() as conn:
            await conn.run_sync(_run)
            await conn.commit()


if context.is_offline_mode():
    raise SystemExit("tuvan's migrations run online only: use `tuvan db upgrade`.")

connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    asyncio.run(_run_with_settings())
