"""The index state: which embedder the stored vectors are of, and the vector columns' dimension."""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.errors import IndexMismatchError
from bot.db.models import FaqVariant, IndexState, VariantOrigin
from retrieval.embedders.base import Embedder

_VECTOR_COLUMNS = (
    ("faq_entries", "ix_faq_entries_embedding_hnsw"),
    ("faq_variants", "ix_faq_variants_embedding_hnsw"),
    ("chunks", "ix_chunks_embedding_hnsw"),
    ("document_summaries", "ix_document_summaries_embedding_hnsw"),
)


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
            await set_dimension(session, embedder.dimension)
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


async def set_dimension(session: AsyncSession, dimension: int) -> None:
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
