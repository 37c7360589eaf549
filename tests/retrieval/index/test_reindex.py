"""Re-embedding the store with another model (retrieval.index.reindex) in a real PostgreSQL,
inside the test's transaction: the session-wide demo knowledge base is the same afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.parts import AnswererParts
from bot.core.errors import IndexMismatchError
from bot.db.models import (
    FaqEntry,
    FaqVariant,
    IndexState,
    VariantOrigin,
)
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.faq_files import read_faq_file
from retrieval.embedders.openai_endpoint import OpenAIEmbedder
from retrieval.faq.candidates import faq_candidates
from retrieval.index.faq_entries import set_variants
from retrieval.index.indexer import Indexer
from retrieval.index.reindex import count_embeddable, reindex
from retrieval.index.state import ensure_index_state, faq_needs_reindex
from tests.fakes.openai_stub import OpenAIStub, start_openai_stub
from tests.retrieval.index._support import (
    HNSW_INDEXES,
    VECTOR_TABLES,
    dimensions,
    embedding_storage,
)

# -- re-embedding with another model ------------------------------------------------------------


@pytest.fixture
async def stub() -> AsyncIterator[OpenAIStub]:
    server = await start_openai_stub(dimension=8)
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def stub_embedder(stub: OpenAIStub) -> AsyncIterator[OpenAIEmbedder]:
    # The constructor asks the server for the dimension with a blocking client: off the loop
    # that serves the stub.
    embedder = await asyncio.to_thread(
        lambda: OpenAIEmbedder(
            "stub-model", base_url=stub.base_url, api_key=SecretStr("k"), max_retries=0
        )
    )
    try:
        yield embedder
    finally:
        embedder.close()


async def test_reindex_with_another_dimension_re_embeds_everything_and_rolls_back(
    engine: AsyncEngine,
    parts: AnswererParts,
    indexer: Indexer,
    demo_kb: dict[str, int],
    stub_embedder: OpenAIEmbedder,
) -> None:
    assert stub_embedder.dimension == 8
    stub_indexer = Indexer(stub_embedder, parts.processor, batch_size=64)
    question = read_faq_file(demo_kb_dir() / "faq.jsonl")[0].question
    async with engine.connect() as conn:
        outer = await conn.begin()
        try:
            sm = async_sessionmaker(
                bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False
            )
            async with sm() as session:
                entry = await session.get(FaqEntry, demo_kb["shut-faq01"])
                assert entry is not None
                await set_variants(session, indexer, entry, ["ma truong shut la gi"])
                # A copy without diacritics as tuvan stored them before 2/6: reindex drops it.
                await set_variants(
                    session, indexer, entry, ["ma truong la gi"], VariantOrigin.folded
                )
                total = await count_embeddable(session)
                assert await faq_needs_reindex(session)  # the start-up warning's test

                assert await reindex(session, stub_indexer) == total - 1
                assert not await faq_needs_reindex(session)
                folded = await session.scalar(
                    select(func.count())
                    .select_from(FaqVariant)
                    .where(FaqVariant.origin == VariantOrigin.folded)
                )
                assert folded == 0

                assert await dimensions(session) == dict.fromkeys(VECTOR_TABLES, 8)
                for table in VECTOR_TABLES:
                    rows, stale = (
                        await session.execute(
                            text(
                                "SELECT count(*), count(*) FILTER (WHERE embedding IS NULL "
                                f"OR vector_dims(embedding) <> 8) FROM {table}"
                            )
                        )
                    ).one()
                    assert rows > 0, table
                    assert stale == 0, table
                indexes = await session.execute(
                    text("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(:n)"),
                    {"n": list(HNSW_INDEXES)},
                )
                assert {n for n, d in indexes if "hnsw (embedding vector_cosine_ops)" in d} == (
                    HNSW_INDEXES
                )
                assert await embedding_storage(session) == dict.fromkeys(VECTOR_TABLES, "m")
                session.expire_all()
                state = await ensure_index_state(session, stub_embedder)
                assert (state.embedder, state.dimension, state.thresholds) == (
                    "openai:stub-model",
                    8,
                    {},
                )
                with pytest.raises(IndexMismatchError, match="tuvan reindex"):
                    await ensure_index_state(session, indexer.embedder)
                [vector] = await asyncio.to_thread(stub_embedder.embed_queries, [question])
                # No verbatim match (empty text): the stored question was embedded as a query.
                best = (await faq_candidates(session, parts.processor, "", [], vector, limit=3))[0]
                assert best.faq_id == demo_kb["shut-faq01"]
                assert not best.verbatim
                assert best.similarity == pytest.approx(1.0, abs=1e-4)
        finally:
            await outer.rollback()

    # ALTER TABLE is transactional in PostgreSQL: the rollback restored the 384-d store.
    async with AsyncSession(engine) as session:
        assert await dimensions(session) == dict.fromkeys(VECTOR_TABLES, 384)
        recorded = await session.get(IndexState, 1)
        assert recorded is not None
        assert (recorded.embedder, recorded.dimension) == (indexer.embedder.name, 384)
        stale = await session.scalar(
            text("SELECT count(*) FROM chunks WHERE vector_dims(embedding) <> 384")
        )
        assert stale == 0
