"""The documents as the offline jobs read them: plain rows of a document, its chunks in reading
order and its current summary, safe to hold across commits and concurrent calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Chunk, Document
from retrieval.chunking.base import approx_tokens
from retrieval.index.summaries import current_summaries, extractive_summary

MAX_HEADINGS = 40


@dataclass(frozen=True)
class ChunkRow:
    id: int
    text: str
    heading_path: str
    page: int | None
    augmented: str | None


@dataclass
class DocumentRow:
    id: int
    source: str
    title: str
    content_hash: str
    context: str | None
    chunks: list[ChunkRow] = field(default_factory=list)
    summary: str | None = None  # the summary of this version, if any

    @property
    def headings(self) -> list[str]:
        seen: dict[str, None] = {}
        for c in self.chunks:
            if c.heading_path:
                seen.setdefault(c.heading_path, None)
        return list(seen)[:MAX_HEADINGS]

    def sample(self, tokens: int) -> str:
        """The document's text from the start, whole chunks up to ~``tokens``."""
        taken: list[str] = []
        budget = tokens
        for c in self.chunks:
            if budget <= 0:
                break
            taken.append(c.text)
            budget -= approx_tokens(c.text)
        return "\n\n".join(taken)

    @property
    def extractive(self) -> str:
        return extractive_summary(self.title, [(c.heading_path, c.text) for c in self.chunks])


def source_matches(source: str, wanted: Sequence[str]) -> bool:
    """``wanted`` empty (every source), or a source as `tuvan sources` lists it or its prefix."""
    return not wanted or any(source == w or source.startswith(w) for w in wanted)


async def load_documents(session: AsyncSession, sources: Sequence[str]) -> list[DocumentRow]:
    """The documents to augment, with their chunks in reading order and current summary."""
    rows = await session.execute(
        select(
            Document.id, Document.source, Document.title, Document.content_hash, Document.context
        ).order_by(Document.id)
    )
    docs = {
        r.id: DocumentRow(r.id, r.source, r.title, r.content_hash, r.context)
        for r in rows
        if source_matches(r.source, sources)
    }
    if not docs:
        return []
    chunks = await session.execute(
        select(
            Chunk.id,
            Chunk.document_id,
            Chunk.text,
            Chunk.heading_path,
            Chunk.page,
            Chunk.augmented_text,
        )
        .where(Chunk.document_id.in_(list(docs)))
        .order_by(Chunk.document_id, Chunk.ordinal)
    )
    for c in chunks:
        docs[c.document_id].chunks.append(
            ChunkRow(c.id, c.text, c.heading_path, c.page, c.augmented_text)
        )
    for doc_id, summary in (await current_summaries(session, list(docs))).items():
        docs[doc_id].summary = summary
    return [d for d in docs.values() if d.chunks]
