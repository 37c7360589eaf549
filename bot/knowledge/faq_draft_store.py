"""The store side of the FAQ drafts (``faq_drafts``): the chunks to ask about, which of them
were asked about for their document's current version, and the drafts stored traced to their
chunk (replacing the untouched drafts of an older version, or all of the chunk's with ``force``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Chunk, Document, FaqEntry, FaqOrigin, FaqStatus
from retrieval.index.faq_entries import embed_faq_entry
from retrieval.index.indexer import Indexer
from retrieval.text.language import detect_language

GENERATED_BY = "tuvan:faq-generate"  # updated_by of an entry no person has edited yet
DONE_KEY = "faq_generated"  # Document.meta: {"version": hash, "ordinals": [chunks asked]}


@dataclass(frozen=True)
class QaPair:
    question: str
    answer: str


@dataclass(frozen=True)
class SourceChunk:
    """A chunk to ask about, as plain values (safe across commits and concurrent calls)."""

    chunk_id: int
    ordinal: int
    document_id: int
    source: str
    title: str
    url: str | None
    version: str  # the document's content hash
    heading_path: str
    text: str


async def select_chunks(
    session: AsyncSession, sources: Sequence[str]
) -> tuple[list[SourceChunk], list[str]]:
    """Every chunk, or those of the documents whose source is or starts with one of
    ``sources``; and the ``sources`` that matched no document."""
    query = (
        select(Chunk, Document)
        .join(Document, Document.id == Chunk.document_id)
        .order_by(Document.source, Chunk.ordinal)
    )
    if sources:
        query = query.where(
            or_(
                *(
                    or_(Document.source == s, Document.source.startswith(s, autoescape=True))
                    for s in sources
                )
            )
        )
    rows = (await session.execute(query)).all()
    jobs = [
        SourceChunk(
            chunk_id=c.id,
            ordinal=c.ordinal,
            document_id=d.id,
            source=d.source,
            title=d.title,
            url=d.url,
            version=d.content_hash,
            heading_path=c.heading_path,
            text=c.text,
        )
        for c, d in rows
    ]
    unmatched = [s for s in sources if not any(j.source.startswith(s) for j in jobs)]
    return jobs, unmatched


async def asked_chunks(session: AsyncSession, jobs: Sequence[SourceChunk]) -> set[int]:
    """The chunk ids asked about (or with drafts) for their document's current version."""
    if not jobs:
        return set()
    rows = await session.execute(
        select(FaqEntry.source_chunk_id, FaqEntry.source_version).where(
            FaqEntry.origin == FaqOrigin.generated,
            FaqEntry.source_chunk_id.in_(sorted({j.chunk_id for j in jobs})),
        )
    )
    versions = {(chunk_id, version) for chunk_id, version in rows}
    metas = await session.execute(
        select(Document.id, Document.meta).where(
            Document.id.in_(sorted({j.document_id for j in jobs}))
        )
    )
    asked = {doc_id: meta.get(DONE_KEY) or {} for doc_id, meta in metas}
    done = set()
    for job in jobs:
        marker = asked.get(job.document_id, {})
        if (job.chunk_id, job.version) in versions or (
            marker.get("version") == job.version and job.ordinal in marker.get("ordinals", [])
        ):
            done.add(job.chunk_id)
    return done


def _untouched_drafts() -> list[Any]:
    return [
        FaqEntry.origin == FaqOrigin.generated,
        FaqEntry.status == FaqStatus.draft,
        FaqEntry.updated_by == GENERATED_BY,
    ]


async def store_drafts(
    session: AsyncSession,
    indexer: Indexer,
    job: SourceChunk,
    pairs: Sequence[QaPair],
    *,
    force: bool,
) -> tuple[list[int], int]:
    """Store ``pairs`` as drafts traced to ``job``; returns their ids and how many earlier
    drafts were replaced: the chunk's own (``force``) and the document's drafts of an older
    version that nobody touched (the re-ingest flagged them; these take their place)."""
    stale = FaqEntry.source_version != job.version
    if force:
        stale = or_(stale, FaqEntry.source_chunk_id == job.chunk_id)
    replaced = (
        await session.scalars(
            delete(FaqEntry)
            .where(FaqEntry.source_document_id == job.document_id, stale, *_untouched_drafts())
            .returning(FaqEntry.id)
        )
    ).all()
    ids = []
    for pair in pairs:
        entry = FaqEntry(
            question=pair.question,
            answer=pair.answer,
            source=job.title or job.source,
            source_url=job.url,
            language=detect_language(pair.question),
            status=FaqStatus.draft,
            origin=FaqOrigin.generated,
            source_document_id=job.document_id,
            source_chunk_id=job.chunk_id,
            source_text=job.text,
            source_version=job.version,
            updated_by=GENERATED_BY,
        )
        session.add(entry)
        await embed_faq_entry(session, indexer, entry)
        ids.append(entry.id)
    await _record_asked(session, job)
    return ids, len(replaced)


async def _record_asked(session: AsyncSession, job: SourceChunk) -> None:
    """Mark the chunk done for this version, so that a re-run does not ask again even when it
    gave no usable pair or staff deleted its drafts (a re-ingest of a changed document resets
    the metadata, and with it the marks)."""
    row = (
        await session.execute(
            select(Document.meta).where(
                Document.id == job.document_id, Document.content_hash == job.version
            )
        )
    ).first()
    if row is None:  # removed or re-ingested meanwhile
        return
    meta = dict(row.meta)
    marker = meta.get(DONE_KEY) or {}
    ordinals = marker.get("ordinals", []) if marker.get("version") == job.version else []
    meta[DONE_KEY] = {"version": job.version, "ordinals": sorted({*ordinals, job.ordinal})}
    # updated_at kept: it says when the source was indexed (`tuvan sources`), not this mark.
    await session.execute(
        update(Document)
        .where(Document.id == job.document_id)
        .values(meta=meta, updated_at=Document.updated_at)
    )


async def generated_entries(session: AsyncSession, jobs: Sequence[SourceChunk]) -> list[FaqEntry]:
    """The generated entries of the chunks of ``jobs``, in id order."""
    return list(
        (
            await session.scalars(
                select(FaqEntry)
                .where(
                    FaqEntry.origin == FaqOrigin.generated,
                    FaqEntry.source_chunk_id.in_(sorted({j.chunk_id for j in jobs})),
                )
                .order_by(FaqEntry.id)
            )
        ).all()
    )
