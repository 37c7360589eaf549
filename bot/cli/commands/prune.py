"""``tuvan prune``: delete the personal data tuvan no longer keeps (``TUVAN_RETENTION__*``),
in short batches; ``--dry-run`` counts it instead. The use-case is
``bot.conversations.retention``, which the worker also runs once a day.

Only the database is opened (no models): the command is quick enough for cron."""

from __future__ import annotations

import click

from bot.cli.common import pass_settings, run
from bot.conversations.retention import count_due, prune
from bot.core.settings import Settings
from bot.db.engine import database_url, engine_for, make_sessionmaker
from bot.runtime import prepare_database


@click.command("prune")
@click.option("--dry-run", is_flag=True, help="Count what would be removed; change nothing.")
@click.option(
    "--batch-size",
    type=click.IntRange(min=1, max=100_000),
    default=None,
    help="Rows per statement. Default: TUVAN_RETENTION__BATCH_SIZE (5000).",
)
@pass_settings
def prune_command(settings: Settings, dry_run: bool, batch_size: int | None) -> None:
    """Delete old messages, contacts with no message left and old login attempts, and empty
    old raw platform payloads, as the TUVAN_RETENTION__* settings say."""
    policy = settings.retention

    async def main() -> None:
        with database_url(settings) as url:
            async with engine_for(url) as engine:
                await prepare_database(engine, migrate_schema=settings.database_url is None)
                sessionmaker = make_sessionmaker(engine)
                if dry_run:
                    report = await count_due(sessionmaker, policy)
                else:
                    found = await prune(sessionmaker, engine, policy, batch_size=batch_size)
                    if found is None:
                        click.echo("another prune is running (a worker or tuvan prune): skipped")
                        return
                    report = found
        for line in report.lines():
            click.echo(line)
        if dry_run:
            click.echo("dry run: nothing was changed")

    run(main())
