"""``tuvan sources``: what the knowledge base was built from, what was derived from each source,
and removing a source with everything derived from it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import click
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.clitools import pass_settings, with_runtime
from bot.runtime import Runtime
from bot.settings import Settings
from retrieval.index import delete_document

# Chunks and FAQ counts aggregated apart, then joined: one join of both would multiply them.
_LIST = text(
    """
    WITH c AS (
        SELECT document_id, count(*) AS chunks,
               count(*) FILTER (WHERE embedding IS NULL) AS unembedded,
               coalesce(max(page), 0) AS pages
        FROM chunks GROUP BY document_id
    ), f AS (
        SELECT source_document_id AS document_id,
               count(*) FILTER (WHERE status = 'draft') AS drafts,
               count(*) FILTER (WHERE status = 'published') AS published,
               count(*) FILTER (WHERE needs_review) AS flagged
        FROM faq_entries WHERE source_document_id IS NOT NULL GROUP BY source_document_id
    ), v AS (
        SELECT e.source_document_id AS document_id, count(*) AS flagged_variants
        FROM faq_variants fv JOIN faq_entries e ON e.id = fv.faq_id
        WHERE fv.needs_review AND e.source_document_id IS NOT NULL
        GROUP BY e.source_document_id
    )
    SELECT d.source, d.title, d.url, d.language, d.content_hash, d.updated_at, d.community,
           coalesce(c.chunks, 0) AS chunks, coalesce(c.unembedded, 0) AS unembedded,
           coalesce(c.pages, 0) AS pages,
           coalesce(f.drafts, 0) AS drafts, coalesce(f.published, 0) AS published,
           coalesce(f.flagged, 0) AS flagged, coalesce(v.flagged_variants, 0) AS flagged_variants
    FROM documents d
    LEFT JOIN c ON c.document_id = d.id
    LEFT JOIN f ON f.document_id = d.id
    LEFT JOIN v ON v.document_id = d.id
    ORDER BY d.source
    """
)


@dataclass(frozen=True)
class SourceRow:
    """One indexed source and what derives from it: generated FAQ entries (drafts, published)
    and the entries and phrasings flagged for review since the source changed."""

    source: str
    title: str
    url: str | None
    language: str
    content_hash: str
    updated_at: datetime
    community: int | None
    chunks: int
    unembedded: int
    pages: int
    drafts: int
    published: int
    flagged: int
    flagged_variants: int

    @property
    def state(self) -> str:
        if self.chunks == 0:
            return "empty"
        if self.unembedded:
            return "stale"  # vectors dropped by a model change: `tuvan reindex`
        return "indexed"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "title": self.title,
            "url": self.url,
            "language": self.language,
            "content_hash": self.content_hash,
            "updated_at": self.updated_at.isoformat(),
            "chunks": self.chunks,
            "pages": self.pages or None,
            "state": self.state,
            "community": self.community,
            "faq": {
                "drafts": self.drafts,
                "published": self.published,
                "flagged": self.flagged,
                "flagged_variants": self.flagged_variants,
            },
        }


async def list_sources(session: AsyncSession) -> list[SourceRow]:
    return [SourceRow(**row._mapping) for row in await session.execute(_LIST)]


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
        async with rt.sessionmaker.begin() as session:
            removed = await delete_document(session, source)
        if not removed:
            raise click.ClickException(f"no source {source!r}: see `tuvan sources`")
        click.echo(f"removed {source}")

    with_runtime(settings, body, check_index=False)
