"""``tuvan db upgrade``: the database schema brought to a revision (Alembic, ``bot.db.migrate``)."""

from __future__ import annotations

import click

from bot.cli.common import pass_settings, run
from bot.core.settings import Settings
from bot.db import migrate
from bot.db.engine import database_url, engine_for


@click.group("db")
def db_group() -> None:
    """Database schema."""


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True)
@pass_settings
def db_upgrade(settings: Settings, revision: str) -> None:
    """Apply the Alembic migrations."""

    async def main() -> None:
        with database_url(settings) as url:
            async with engine_for(url) as engine:
                await migrate.upgrade(engine, revision)
                click.echo(f"database at {await migrate.current_revision(engine)}")

    run(main())
