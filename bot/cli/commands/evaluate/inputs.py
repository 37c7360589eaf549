"""What the ``tuvan eval`` commands take: question and FAQ files, a corpus folder, the server
the throwaway database is created on, and the knowledge they load from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
DIR = click.Path(exists=True, file_okay=False, path_type=Path)
server_option = click.option(
    "--server-url",
    default=None,
    help="Create the throwaway database on this PostgreSQL server (role needs CREATEDB) "
    "instead of starting a private embedded one.",
)


def knowledge_of(
    corpus: Path | None,
    chunks: Path | None,
    faq: Path | None,
    *,
    chunker: str | None = None,
    context_header: bool = True,
) -> Any:
    from bot.evaluation.data import read_faq_items, read_passages
    from bot.evaluation.questions import Knowledge

    if (corpus is None) == (chunks is None):
        raise click.UsageError("give exactly one of --corpus DIR and --chunks CHUNKS.jsonl")
    if chunker is not None and corpus is None:
        raise click.UsageError("--chunker cuts a --corpus folder; --chunks are indexed as given")
    return Knowledge(
        corpus=corpus,
        passages=read_passages(chunks) if chunks else None,
        faq=read_faq_items(faq) if faq else None,
        chunker=chunker,  # type: ignore[arg-type]  # a click.Choice of CHUNKER_MODES
        context_header=context_header,
    )
