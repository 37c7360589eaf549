"""The composition root for command-line and server processes: database, models, answerer."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.conversation import ConversationAnswerer
from bot.answer.parts import AnswererParts
from bot.core.errors import DatabaseError
from bot.core.settings import Settings
from bot.db import migrate
from bot.db.engine import database_url, engine_for, make_sessionmaker
from bot.knowledge.gate import IngestGate
from bot.llm.client import LlmClient
from retrieval.embedders import load_embedder
from retrieval.guard.vocabulary import load_guard
from retrieval.index.indexer import Indexer
from retrieval.index.state import ensure_index_state, faq_needs_reindex
from retrieval.search.rerank import Reranker
from retrieval.text.vocabulary import load_text_processor

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    parts: AnswererParts
    answerer: Answerer
    # The process's one gate for ingestions (``ingest.concurrency`` at a time).
    ingest_gate: IngestGate = field(init=False)
    # Answering a conversation's message, whatever the channel (bot.answer.conversation).
    conversations: ConversationAnswerer = field(init=False)

    def __post_init__(self) -> None:
        self.ingest_gate = IngestGate(self.settings.ingest.concurrency)
        self.conversations = ConversationAnswerer(self.answerer, self.sessionmaker)

    @property
    def indexer(self) -> Indexer:
        return Indexer(
            self.parts.embedder,
            self.parts.processor,
            self.settings.embed_batch_size,
            self.settings.ingest.chunker,
            guard=self.parts.guard,
            facts_review=self.settings.ingest.facts_review,
        )


def build_parts(settings: Settings) -> AnswererParts:
    reranker = None
    if settings.search.reranker_path is not None:
        reranker = Reranker(settings.search.reranker_path)
    return AnswererParts(
        settings=settings,
        embedder=load_embedder(settings.embedding),
        processor=load_text_processor(settings.text),
        guard=load_guard(settings.text),
        llm=LlmClient(settings.llm) if settings.llm.enabled else None,
        reranker=reranker,
    )


async def prepare_database(engine: AsyncEngine, *, migrate_schema: bool) -> None:
    """Bring the schema to head (embedded) or check that it is there (a server of the operator's,
    whose schema changes are theirs to schedule with `tuvan db upgrade`)."""
    if migrate_schema:
        await migrate.upgrade(engine)
        return
    current = await migrate.current_revision(engine)
    head = migrate.head_revision()
    if current != head:
        raise DatabaseError(
            f"the database schema is at {current or 'nothing'}, tuvan needs {head}: "
            "run `tuvan db upgrade`"
        )


def no_announce(stage: str) -> None:
    """The stages' listener of a caller that shows none."""
    return None


@asynccontextmanager
async def open_runtime(
    settings: Settings, *, check_index: bool = True, announce: Callable[[str], None] = no_announce
) -> AsyncIterator[Runtime]:
    """Database (embedded or configured), schema, models; released in reverse order.
    ``announce`` hears each stage as it begins (the long-running commands print them)."""
    async with AsyncExitStack() as stack:
        if settings.database_url is None:
            announce(f"starting the embedded database in {settings.data_dir / 'pg'}")
        url = stack.enter_context(database_url(settings))
        engine = await stack.enter_async_context(engine_for(url))
        await prepare_database(engine, migrate_schema=settings.database_url is None)
        announce("loading the models (embeddings, Vietnamese word segmentation)")
        parts = build_parts(settings)
        if parts.llm is not None:
            stack.push_async_callback(parts.llm.aclose)
        sessionmaker = make_sessionmaker(engine)
        if check_index:
            async with sessionmaker.begin() as session:
                await ensure_index_state(session, parts.embedder)
                if await faq_needs_reindex(session):
                    log.warning(
                        "the FAQ was embedded by a tuvan before 2/6 (as passages, with copies "
                        "without diacritics): tier 1 matches worse until `tuvan reindex` "
                        "embeds its questions as questions"
                    )
        yield Runtime(settings, engine, sessionmaker, parts, Answerer(parts, sessionmaker))
