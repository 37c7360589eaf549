"""Writing the knowledge store: documents → chunks with embeddings and keyword text, FAQ entries.

Functions take the session first and never commit: the caller owns the transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.errors import IndexMismatchError
from bot.core.types import ChunkerMode
from bot.db.models import (
    Chunk,
    Document,
    DocumentSummary,
    FaqEntry,
    FaqStatus,
    FaqVariant,
    IndexState,
    VariantOrigin,
)
from retrieval.chunking import ChunkDraft, contextual_header
from retrieval.embedders import Embedder, embed_off_loop
from retrieval.legal_chunking import draft_chunks
from retrieval.loaders import LoadedDocument
from retrieval.summaries import drop_summary, summary_search_text
from retrieval.text import TextProcessor, detect_language

Progress = Callable[[int], None]

_VECTOR_COLUMNS = (
    ("faq_entries", "ix_faq_entries_embedding_hnsw"),
    ("faq_variants", "ix_faq_variants_embedding_hnsw"),
    ("chunks", "ix_chunks_embedding_hnsw"),
    ("document_summaries", "ix_document_summaries_embedding_hnsw"),
)


@dataclass(frozen=True)
class Indexer:
    """What indexing needs: the embedder and the keyword-text processor."""

    embedder: Embedder
    processor: TextProcessor
    batch_size: int = 32
    # Which chunker cuts a document (retrieval.legal_chunking.chunk_for): "auto" picks the
    # regulation chunker for documents with Chương/Điều structure, AUTO_CHUNKER else.
    chunker: ChunkerMode = "auto"
    # Prepend "title › headings (trang N)" to each chunk for embedding and keyword search.
    context_header: bool = True

    async def passages(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray[Any, Any]:
        """Embed passages in batches, off the event loop (the models are CPU-bound)."""
        return await self._embed(self.embedder.embed_passages, texts, progress)

    async def questions(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray[Any, Any]:
        """Embed FAQ questions and variants as written, as *queries* (e5's "query: "): a
        question then meets its own phrasings best (docs/benchmarks.md, "How stored FAQ texts
        are embedded")."""
        return await self._embed(self.embedder.embed_queries, texts, progress)

    async def _embed(
        self,
        embed: Callable[[list[str]], np.ndarray[Any, Any]],
        texts: Sequence[str],
        progress: Progress | None,
    ) -> np.ndarray[Any, Any]:
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            parts.append(await embed_off_loop(embed, batch))
            if progress:
                progress(len(batch))
        if not parts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        return np.vstack(parts)


# -- index state ----------------------------------------------------------------------------


async def get_index_state(session: AsyncSession) -> IndexState | None:
    return await session.get(IndexState, 1)


async def column_dimension(session: AsyncSession) -> int:
    """The dimension the vector columns have now (pgvector keeps it in atttypmod)."""
    row = await session.execute(
        text(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'chunks'::regclass "
            "AND attname = 'embedding'"
        )
    )
    return int(row.scalar_one())


async def ensure_index_state(session: AsyncSession, embedder: Embedder) -> IndexState:
    """Check that the stored vectors were built by ``embedder``; record it on an empty store.

    Raises IndexMismatchError naming the command that fixes it when the model or dimension
    changed since the vectors were made.
    """
    state = await get_index_state(session)
    if state is None:
        if await _has_vectors(session):
            raise IndexMismatchError(
                "the store holds embeddings but no record of the model that made them: "
                "run `tuvan reindex`"
            )
        if await column_dimension(session) != embedder.dimension:
            await _set_dimension(session, embedder.dimension)
        state = IndexState(id=1, embedder=embedder.name, dimension=embedder.dimension)
        session.add(state)
        await session.flush()
        return state
    if state.embedder != embedder.name or state.dimension != embedder.dimension:
        raise IndexMismatchError(
            f"the index was built with {state.embedder} ({state.dimension}-d) but the configured "
            f"embedder is {embedder.name} ({embedder.dimension}-d): run `tuvan reindex` to "
            "re-embed everything, or set TUVAN_EMBEDDER back"
        )
    return state


async def faq_needs_reindex(session: AsyncSession) -> bool:
    """Whether the FAQ was embedded before 2/6 (as passages, with copies without diacritics):
    those copies are the trace such a store keeps. `tuvan reindex` embeds it anew."""
    found = await session.scalar(
        select(FaqVariant.id).where(FaqVariant.origin == VariantOrigin.folded).limit(1)
    )
    return found is not None


async def _has_vectors(session: AsyncSession) -> bool:
    for table, _ in _VECTOR_COLUMNS:
        found = await session.execute(
            text(f"SELECT 1 FROM {table} WHERE embedding IS NOT NULL LIMIT 1")  # noqa: S608
        )
        if found.first() is not None:
            return True
    return False


async def _set_dimension(session: AsyncSession, dimension: int) -> None:
    """Change the vector columns to ``dimension`` and rebuild their HNSW indexes.

    The one schema change made outside a migration: the dimension belongs to the configured
    model, not to the code. Values are dropped first (a vector cannot be cast to another size).
    The table and index names are constants of this module, never input.
    """
    dim = int(dimension)
    for table, index in _VECTOR_COLUMNS:
        await session.execute(text(f"DROP INDEX IF EXISTS {index}"))
        await session.execute(text(f"UPDATE {table} SET embedding = NULL"))  # noqa: S608
        await session.execute(
            text(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({dim})")
        )
        # A new type brings the type's default storage back; keep vectors in the row (0002).
        await session.execute(text(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN"))
        await session.execute(
            text(
                f"CREATE INDEX {index} ON {table} USING hnsw (embedding vector_cosine_ops) "
                "WITH (m = 16, ef_construction = 64)"
            )
        )


async def save_thresholds(session: AsyncSession, values: dict[str, float]) -> None:
    """Store calibrated thresholds beside the record of the model they were calibrated for."""
    state = await get_index_state(session)
    if state is None:
        raise IndexMismatchError("no index yet: load a FAQ or documents first")
    state.thresholds = {**state.thresholds, **values}
    await session.flush()


# -- documents ------------------------------------------------------------------------------


@dataclass
class IndexResult:
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
        return IndexResult(existing.id, int(count or 0), unchanged=True)
    chunked_here = drafts is None
    if drafts is None:
        # The contextual header is embedded with the chunk: leave room for it in e5's 512 tokens.
        drafts = await draft_chunks(
            doc, indexer.chunker, indexer.embedder, target_tokens=280, max_tokens=400
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
    return IndexResult(existing.id, len(drafts))


async def delete_document(session: AsyncSession, source: str) -> bool:
    found = await session.scalar(select(Document).where(Document.source == source))
    if found is None:
        return False
    await session.delete(found)
    await session.flush()
    return True


# -- FAQ --------------------------------------------------------------------------------------


@dataclass
class FaqDraft:
    question: str
    answer: str
    external_id: str | None = None
    source: str | None = None
    source_url: str | None = None
    language: str | None = None
    status: FaqStatus = FaqStatus.published
    variants: list[str] = field(default_factory=list)
    updated_by: str | None = None


async def flag_generated_variants(session: AsyncSession, faq_id: int) -> None:
    """An entry's question changed: the phrasings generated from the old one wait for staff,
    and `tuvan faq enrich` redoes them."""
    await session.execute(
        update(FaqVariant)
        .where(FaqVariant.faq_id == faq_id, FaqVariant.origin == VariantOrigin.generated)
        .values(needs_review=True)
    )


async def upsert_faq(session: AsyncSession, indexer: Indexer, draft: FaqDraft) -> FaqEntry:
    """Create or update an FAQ entry (by ``external_id`` when given), embedded at once."""
    entry = None
    if draft.external_id:
        entry = await session.scalar(
            select(FaqEntry).where(FaqEntry.external_id == draft.external_id)
        )
    if entry is None:
        entry = FaqEntry(external_id=draft.external_id)
        session.add(entry)
    elif entry.question != draft.question:
        await flag_generated_variants(session, entry.id)
    entry.question = draft.question
    entry.answer = draft.answer
    entry.source = draft.source
    entry.source_url = draft.source_url
    entry.language = draft.language or detect_language(draft.question)
    entry.status = draft.status
    entry.updated_by = draft.updated_by
    await embed_faq_entry(session, indexer, entry)
    await set_variants(session, indexer, entry, draft.variants)
    await drop_folded_variants(session, entry)
    return entry


async def drop_folded_variants(session: AsyncSession, entry: FaqEntry) -> None:
    """Remove the copies without diacritics that tuvan stored before 2/6.

    A question typed without diacritics is now restored before it is matched, and a verbatim
    phrasing is matched on its folded words (retrieval.faq), so the copies only crowded the
    ranking: without them the nearest entry is the right one more often (docs/benchmarks.md,
    "How stored FAQ texts are embedded").
    """
    await session.execute(
        delete(FaqVariant).where(
            FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.folded
        )
    )


async def embed_faq_entry(session: AsyncSession, indexer: Indexer, entry: FaqEntry) -> None:
    [vector] = await indexer.questions([entry.question])
    entry.embedding = vector
    entry.keyword_text = indexer.processor.keyword_text(entry.question)
    await session.flush()


async def set_variants(
    session: AsyncSession,
    indexer: Indexer,
    entry: FaqEntry,
    texts: Sequence[str],
    origin: VariantOrigin = VariantOrigin.staff,
) -> None:
    """Replace the entry's variants of ``origin`` with ``texts``, embedded."""
    await session.flush()
    await session.execute(
        delete(FaqVariant).where(FaqVariant.faq_id == entry.id, FaqVariant.origin == origin)
    )
    unique = [t for t in dict.fromkeys(t.strip() for t in texts) if t and t != entry.question]
    if not unique:
        return
    vectors = await indexer.questions(unique)
    session.add_all(
        FaqVariant(
            faq_id=entry.id,
            text=t,
            origin=origin,
            keyword_text=indexer.processor.keyword_text(t),
            embedding=vectors[i],
        )
        for i, t in enumerate(unique)
    )
    await session.flush()


# -- re-embedding -----------------------------------------------------------------------------


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
        await _set_dimension(session, embedder.dimension)
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
