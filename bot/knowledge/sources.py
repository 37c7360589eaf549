"""The indexed sources and what derives from each: one query for ``tuvan sources`` and the
admin's Documents page, so both show the same states and counts; and a source removed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from retrieval.index.documents import delete_document

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
    SELECT d.id, d.source, d.title, d.url, d.language, d.content_hash, d.updated_at, d.community,
           d.year, d.valid_until, d.validity_by_staff,
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

    id: int
    source: str
    title: str
    url: str | None
    language: str
    content_hash: str
    updated_at: datetime
    community: int | None
    year: int | None  # the year it speaks of, and until when it holds (read, or set by staff)
    valid_until: date | None
    validity_by_staff: bool
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
            "year": self.year,
            "valid_until": self.valid_until.isoformat() if self.valid_until else None,
            "faq": {
                "drafts": self.drafts,
                "published": self.published,
                "flagged": self.flagged,
                "flagged_variants": self.flagged_variants,
            },
        }


async def list_sources(session: AsyncSession) -> list[SourceRow]:
    return [SourceRow(**row._mapping) for row in await session.execute(_LIST)]


async def remove_source(sessionmaker: async_sessionmaker[AsyncSession], source: str) -> bool:
    """Remove ``source``, its chunks and the FAQ entries generated from it; False if unknown."""
    async with sessionmaker.begin() as session:
        return await delete_document(session, source)
