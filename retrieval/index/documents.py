"""Documents in the store: a loaded document indexed as chunks (replacing an older version), or
deleted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Chunk, Document, FaqEntry, FaqVariant, VariantOrigin
from retrieval.chunking import draft_chunks
from retrieval.chunking.base import ChunkDraft, ChunkSizes, contextual_header
from retrieval.facts.years import document_validity
from retrieval.guard.vocabulary import load_guard
from retrieval.index.facts import facts_current, store_facts
from retrieval.index.indexer import Indexer, Progress
from retrieval.index.summaries import drop_summary
from retrieval.loading.document import LoadedDocument


@dataclass
class IndexResult:
    """The document's id, its chunk count, and whether it was left as it was."""

    document_id: int
    chunks: int
    unchanged: bool = False


def chunk_search_text(
    title: str, draft: ChunkDraft, *, header: bool = True, augmented: str | None = None
) -> str:
    """What is embedded and keyword-indexed for a chunk: a contextual header, then the text.

    ``augmented`` (URAG-D, `tuvan augment`) replaces the text: it carries its document's context
    already, and the header still names where it is.
    """
    body = augmented or draft.text
    if not header:
        return body
    return f"{contextual_header(title, draft.heading_path, draft.page)}\n{body}"


async def flag_derived_items(session: AsyncSession, document_id: int, note: str) -> int:
    """Mark the FAQ entries generated from a document, and their generated variants, for review.

    Returns the number of entries flagged. Called when the document's content changes.
    """
    flagged = (
        await session.scalars(
            update(FaqEntry)
            .where(FaqEntry.source_document_id == document_id)
            .values(needs_review=True, review_note=note)
            .returning(FaqEntry.id)
        )
    ).all()
    if flagged:
        await session.execute(
            update(FaqVariant)
            .where(FaqVariant.faq_id.in_(flagged), FaqVariant.origin == VariantOrigin.generated)
            .values(needs_review=True)
        )
    return len(flagged)


async def index_document(
    session: AsyncSession,
    indexer: Indexer,
    doc: LoadedDocument,
    drafts: Sequence[ChunkDraft] | None = None,
    *,
    external_ids: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> IndexResult:
    """Insert or replace a document and its chunks; an unchanged document is left alone.

    Unchanged means the same content, cut by the same chunker: after a change of
    ``TUVAN_INGEST__CHUNKER`` a re-ingest re-cuts the document (without flagging what was
    generated from it: its content is the same).
    """
    existing = await session.scalar(select(Document).where(Document.source == doc.source))
    same_content = existing is not None and existing.content_hash == doc.content_hash
    chunker = str(existing.meta.get("chunker", indexer.chunker)) if existing is not None else ""
    if existing is not None and same_content and (drafts is not None or chunker == indexer.chunker):
        count = await session.scalar(
            select(func.count()).select_from(Chunk).where(Chunk.document_id == existing.id)
        )
        if not facts_current(existing.meta):  # read by an older extractor, or none
            await store_facts(
                session, existing, doc, indexer.guard or load_guard(), review=indexer.facts_review
            )
        if existing.year is None and existing.valid_until is None:  # stored before 0016
            read_document_validity(existing, doc)
        return IndexResult(existing.id, int(count or 0), unchanged=True)
    chunked_here = drafts is None
    if drafts is None:
        # The contextual header is embedded with the chunk: leave room for it in e5's 512 tokens.
        drafts = await draft_chunks(
            doc,
            indexer.chunker,
            indexer.embedder,
            sizes=ChunkSizes(target_tokens=280, max_tokens=400),
        )
    search_texts = [chunk_search_text(doc.title, d, header=indexer.context_header) for d in drafts]
    vectors = await indexer.passages(search_texts, progress)
    if existing is None:
        existing = Document(source=doc.source)
        session.add(existing)
    else:
        # The old chunks go (generated FAQ entries keep their source text, chunk id set NULL).
        await session.execute(delete(Chunk).where(Chunk.document_id == existing.id))
        if not same_content:
            # What was generated from the old version waits for staff; augmentation is stale.
            await flag_derived_items(
                session, existing.id, f"source changed on re-ingest ({doc.source})"
            )
            existing.context = None
            await drop_summary(session, existing.id)
    existing.title = doc.title
    existing.url = doc.url
    existing.language = doc.language
    existing.content_hash = doc.content_hash
    existing.meta = dict(doc.meta)
    read_document_validity(existing, doc)
    if chunked_here:
        existing.meta["chunker"] = indexer.chunker
    await session.flush()
    session.add_all(
        Chunk(
            document_id=existing.id,
            ordinal=d.ordinal,
            page=d.page,
            heading_path=" › ".join(d.heading_path),
            text=d.text,
            external_id=external_ids[i] if external_ids else None,
            keyword_text=indexer.processor.keyword_text(search_texts[i]),
            embedding=vectors[i],
            token_count=d.token_count,
        )
        for i, d in enumerate(drafts)
    )
    await session.flush()
    await store_facts(
        session, existing, doc, indexer.guard or load_guard(), review=indexer.facts_review
    )
    return IndexResult(existing.id, len(drafts))


def read_document_validity(
    document: Document, doc: LoadedDocument, *, today: date | None = None
) -> None:
    """The year ``doc`` speaks of and until when it holds, as its text says; what staff set
    is kept."""
    if document.validity_by_staff:
        return
    text = "\n".join(section.text for section in doc.sections)
    document.year, document.valid_until = document_validity(doc.title, text, today or date.today())


async def delete_document(session: AsyncSession, source: str) -> bool:
    found = await session.scalar(select(Document).where(Document.source == source))
    if found is None:
        return False
    await session.delete(found)
    await session.flush()
    return True
