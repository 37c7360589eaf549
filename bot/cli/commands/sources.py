"""``tuvan sources``: what the knowledge base was built from, what was derived from each source,
and removing a source with everything derived from it."""

from __future__ import annotations

import json

import click

from bot.cli.common import pass_settings, with_runtime
from bot.core.settings import Settings
from bot.knowledge.sources import list_sources, remove_source
from bot.runtime import Runtime


@click.group("sources", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per source.")
@click.pass_context
def sources_group(ctx: click.Context, as_json: bool) -> None:
    """List the indexed sources (files, pages) with their state and the FAQ entries generated
    from them (drafts / published / flagged for review); `remove` takes one out."""
    if ctx.invoked_subcommand is not None:
        return
    settings = ctx.find_object(Settings)
    assert settings is not None  # the top-level group always builds it

    async def body(rt: Runtime) -> None:
        async with rt.sessionmaker() as session:
            rows = await list_sources(session)
        if as_json:
            for r in rows:
                click.echo(json.dumps(r.to_json(), ensure_ascii=False))
            return
        for r in rows:
            click.echo(
                f"{r.state:<10} {r.chunks:>4} chunks  "
                f"FAQ {r.drafts:>3}d {r.published:>3}p {r.flagged + r.flagged_variants:>3}!  "
                f"{r.content_hash[:10]}  {r.updated_at:%Y-%m-%d %H:%M}  {r.source}"
            )
        click.echo(
            f"{len(rows)} sources, {sum(r.chunks for r in rows)} chunks; generated FAQ entries: "
            f"{sum(r.drafts for r in rows)} drafts (d), {sum(r.published for r in rows)} "
            f"published (p), {sum(r.flagged + r.flagged_variants for r in rows)} entries and "
            "phrasings flagged for review since their source changed (!)"
        )

    with_runtime(settings, body, check_index=False)


@sources_group.command("remove")
@click.argument("source")
@pass_settings
def sources_remove(settings: Settings, source: str) -> None:
    """Remove SOURCE (as `tuvan sources` lists it), its chunks and the FAQ entries generated
    from it (published ones too: their answers came from it)."""

    async def body(rt: Runtime) -> None:
        removed = await remove_source(rt.sessionmaker, source)
        if not removed:
            raise click.ClickException(f"no source {source!r}: see `tuvan sources`")
        click.echo(f"removed {source}")

    with_runtime(settings, body, check_index=False)
