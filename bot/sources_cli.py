"""``tuvan sources``: what the knowledge base was built from, and removing a source from it."""

from __future__ import annotations

import json

import click
from sqlalchemy import text

from bot.clitools import pass_settings, with_runtime
from bot.runtime import Runtime
from bot.settings import Settings
from retrieval.index import delete_document

_LIST = text(
    """
    SELECT d.source, d.title, d.url, d.language, d.content_hash, d.updated_at,
           count(c.id) AS chunks, count(c.id) FILTER (WHERE c.embedding IS NULL) AS unembedded,
           coalesce(max(c.page), 0) AS pages
    FROM documents d LEFT JOIN chunks c ON c.document_id = d.id
    GROUP BY d.id ORDER BY d.source
    """
)


@click.group("sources", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per source.")
@click.pass_context
def sources_group(ctx: click.Context, as_json: bool) -> None:
    """List the indexed sources (files, pages) with their state; `remove` takes one out."""
    if ctx.invoked_subcommand is not None:
        return
    settings = ctx.find_object(Settings)
    assert settings is not None  # the top-level group always builds it

    async def body(rt: Runtime) -> None:
        async with rt.sessionmaker() as session:
            rows = (await session.execute(_LIST)).all()
        if as_json:
            for r in rows:
                click.echo(
                    json.dumps(
                        {
                            "source": r.source,
                            "title": r.title,
                            "url": r.url,
                            "language": r.language,
                            "content_hash": r.content_hash,
                            "updated_at": r.updated_at.isoformat(),
                            "chunks": r.chunks,
                            "pages": r.pages or None,
                            "state": _state(r.chunks, r.unembedded),
                        },
                        ensure_ascii=False,
                    )
                )
            return
        for r in rows:
            click.echo(
                f"{_state(r.chunks, r.unembedded):<10} {r.chunks:>4} chunks  "
                f"{r.content_hash[:10]}  {r.updated_at:%Y-%m-%d %H:%M}  {r.source}"
            )
        click.echo(f"{len(rows)} sources, {sum(r.chunks for r in rows)} chunks")

    with_runtime(settings, body, check_index=False)


def _state(chunks: int, unembedded: int) -> str:
    if chunks == 0:
        return "empty"
    if unembedded:
        return "stale"  # vectors dropped by a model change: `tuvan reindex`
    return "indexed"


@sources_group.command("remove")
@click.argument("source")
@pass_settings
def sources_remove(settings: Settings, source: str) -> None:
    """Remove SOURCE (as `tuvan sources` lists it) and every chunk that came from it."""

    async def body(rt: Runtime) -> None:
        async with rt.sessionmaker.begin() as session:
            removed = await delete_document(session, source)
        if not removed:
            raise click.ClickException(f"no source {source!r}: see `tuvan sources`")
        click.echo(f"removed {source}")

    with_runtime(settings, body, check_index=False)
