"""The index state (retrieval.index.state) in a real PostgreSQL, inside the test's
transaction: the session-wide demo knowledge base is the same afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core.errors import IndexMismatchError
from bot.db.models import (
    IndexState,
)
from retrieval.index.documents import index_document
from retrieval.index.indexer import Indexer
from retrieval.index.state import ensure_index_state
from retrieval.loading import load_file
from tests.retrieval._support import write
from tests.retrieval.index._support import (
    HANDBOOK,
    VECTOR_TABLES,
    embedding_storage,
)


async def test_vectors_are_stored_in_the_row(session: AsyncSession) -> None:
    # Migration 0002: MAIN, not pgvector's EXTERNAL, so that heap distances skip TOAST.
    assert await embedding_storage(session) == dict.fromkeys(VECTOR_TABLES, "m")


# -- the record of the embedder ----------------------------------------------------------------


async def empty_the_store(session: AsyncSession) -> None:
    """Inside the test's transaction only: the rollback brings everything back."""
    for table in ("index_state", "faq_entries", "documents"):  # variants, chunks cascade
        await session.execute(text(f"DELETE FROM {table}"))


async def test_empty_store_records_the_configured_embedder(
    session: AsyncSession, indexer: Indexer
) -> None:
    await empty_the_store(session)
    state = await ensure_index_state(session, indexer.embedder)
    assert (state.embedder, state.dimension) == (indexer.embedder.name, 384)
    stored = (await session.execute(select(IndexState.embedder, IndexState.dimension))).all()
    assert stored == [(indexer.embedder.name, 384)]
    assert await ensure_index_state(session, indexer.embedder) is state  # now just a check


async def test_vectors_without_a_record_ask_for_reindex(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    await empty_the_store(session)
    await index_document(session, indexer, load_file(write(tmp_path / "a.md", HANDBOOK)))
    with pytest.raises(IndexMismatchError, match="tuvan reindex"):
        await ensure_index_state(session, indexer.embedder)


@pytest.mark.parametrize(
    "change",
    [
        "embedder = 'sentence-transformers:/models/other'",
        "dimension = 768",
    ],
)
async def test_recorded_embedder_that_differs_raises_index_mismatch(
    session: AsyncSession, indexer: Indexer, change: str
) -> None:
    await ensure_index_state(session, indexer.embedder)
    await session.execute(text(f"UPDATE index_state SET {change}"))
    session.expire_all()
    with pytest.raises(IndexMismatchError, match="tuvan reindex") as caught:
        await ensure_index_state(session, indexer.embedder)
    assert indexer.embedder.name in str(caught.value)
