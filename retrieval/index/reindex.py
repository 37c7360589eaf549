"""Re-embedding the whole store with the configured embedder (`tuvan reindex`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import (
    Chunk,
    Document,
    DocumentSummary,
    FaqEntry,
    FaqVariant,
    IndexState,
    VariantOrigin,
)
from retrieval.chunking.base import ChunkDraft
from retrieval.index.documents import chunk_search_text
from retrieval.index.indexer import Indexer, Progress
from retrieval.index.state import column_dimension, get_index_state, set_dimension
from retrieval.index.summaries import summary_search_text


async def count_embeddable(session: AsyncSession) -> int:
    total = 0
    for model in (FaqEntry, FaqVariant, Chunk, DocumentSummary):
        total += int(await session.scalar(select(func.count()).select_from(model)) or 0)
    return total


async def reindex(session: AsyncSession, indexer: Indexer, progress: Progress | None = None) -> int:
    """Re-embed every FAQ entry, variant, chunk and document summary with the configured embedder.

    FAQ questions and variants are embedded as questions (``Indexer.questions``), and the
    copies without diacritics stored before 2/6 are removed. Keyword text is recomputed too (the
    abbreviation list may have changed). Thresholds that were calibrated for the old model are
    dropped. Returns the number of rows embedded.
    """
    embedder = indexer.embedder
    if await column_dimension(session) != embedder.dimension:
        await set_dimension(session, embedder.dimension)
    done = 0
    await session.execute(delete(FaqVariant).where(FaqVariant.origin == VariantOrigin.folded))
    entries = (await session.execute(select(FaqEntry.id, FaqEntry.question))).all()
    done += await _reembed(
        session, indexer, FaqEntry, [(i, q) for i, q in entries], progress, as_questions=True
    )
    variants = (await session.execute(select(FaqVariant.id, FaqVariant.text))).all()
    done += await _reembed(
        session, indexer, FaqVariant, [(i, t) for i, t in variants], progress, as_questions=True
    )
    rows = (
        await session.execute(
            select(
                Chunk.id,
                Chunk.text,
                Chunk.heading_path,
                Chunk.page,
                Chunk.augmented_text,
                Document.title,
            ).join(Document)
        )
    ).all()
    chunk_items = [
        (
            cid,
            chunk_search_text(
                title,
                _draft(body, heading, page),
                header=indexer.context_header,
                augmented=augmented,
            ),
        )
        for cid, body, heading, page, augmented, title in rows
    ]
    done += await _reembed(session, indexer, Chunk, chunk_items, progress)
    summaries = (
        await session.execute(
            select(DocumentSummary.document_id, DocumentSummary.summary, Document.title).join(
                Document, Document.id == DocumentSummary.document_id
            )
        )
    ).all()
    summary_items = [(i, summary_search_text(title, s)) for i, s, title in summaries]
    done += await _reembed(
        session, indexer, DocumentSummary, summary_items, progress, "document_id"
    )
    state = await get_index_state(session)
    if state is None:
        session.add(IndexState(id=1, embedder=embedder.name, dimension=embedder.dimension))
    else:
        state.embedder = embedder.name
        state.dimension = embedder.dimension
        state.thresholds = {}
    await session.flush()
    return done


def _draft(body: str, heading_path: str, page: int | None) -> ChunkDraft:
    path = tuple(p for p in heading_path.split(" › ") if p)
    return ChunkDraft(ordinal=0, text=body, heading_path=path, page=page, token_count=0)


async def _reembed(
    session: AsyncSession,
    indexer: Indexer,
    model: Any,
    items: Sequence[tuple[int, str]],
    progress: Progress | None,
    key: str = "id",
    *,
    as_questions: bool = False,
) -> int:
    embed = indexer.questions if as_questions else indexer.passages
    for start in range(0, len(items), 256):
        part = items[start : start + 256]
        vectors = await embed([t for _, t in part], progress)
        await session.execute(
            update(model),
            [
                {
                    key: row_id,
                    "embedding": vectors[i],
                    "keyword_text": indexer.processor.keyword_text(t),
                }
                for i, (row_id, t) in enumerate(part)
            ],
        )
    return len(items)
