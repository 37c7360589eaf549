"""A throwaway knowledge store for one evaluation run, loaded with tuvan's own code.

By default a private embedded PostgreSQL in a temporary folder, deleted afterwards; with a
server URL, a temporary database created on that server (the role needs CREATEDB) and dropped
afterwards. Either way the live knowledge base is never touched.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.parts import AnswererParts
from bot.core.types import ChunkerMode
from bot.db import migrate
from bot.db.engine import make_engine, make_sessionmaker, sqlalchemy_url, start_embedded
from bot.evaluation.data import FaqItem, Passage
from bot.knowledge.faq_paraphrases import FaqParaphraseJob, FaqParaphraseOptions
from bot.knowledge.ingest import ingest_paths
from retrieval.chunking.base import ChunkDraft
from retrieval.embedders.base import embed_off_loop
from retrieval.index.documents import index_document
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer
from retrieval.index.state import ensure_index_state
from retrieval.loading.document import LoadedDocument, Section
from retrieval.query import PreparedQuery
from retrieval.text.language import detect_language

log = logging.getLogger(__name__)


@dataclass
class Workspace:
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]


@asynccontextmanager
async def throwaway_database(server_url: str | None = None) -> AsyncIterator[Workspace]:
    """A migrated, empty database that is gone when the block ends."""
    if server_url is None:
        root = Path(tempfile.mkdtemp(prefix="tuvan-eval-"))
        server = start_embedded(root / "pg")
        try:
            async with _migrated(server.url) as workspace:
                yield workspace
        finally:
            server.release()
            shutil.rmtree(root, ignore_errors=True)
        return
    url = make_url(sqlalchemy_url(server_url))
    name = f"tuvan_eval_{secrets.token_hex(6)}"  # generated here, never input
    admin = make_engine(url.render_as_string(hide_password=False), pool_size=1)
    try:
        async with admin.connect() as conn:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            target = url.set(database=name).render_as_string(hide_password=False)
            async with _migrated(target) as workspace:
                yield workspace
        finally:
            async with admin.connect() as conn:
                conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await admin.dispose()


@asynccontextmanager
async def _migrated(url: str) -> AsyncIterator[Workspace]:
    engine = make_engine(url)
    try:
        await migrate.upgrade(engine)
        yield Workspace(engine, make_sessionmaker(engine))
    finally:
        await engine.dispose()


def indexer_for(
    parts: AnswererParts, *, chunker: ChunkerMode | None = None, context_header: bool = True
) -> Indexer:
    """The indexer the settings describe; an evaluation may try another chunker, or chunks
    embedded without their contextual header."""
    return Indexer(
        parts.embedder,
        parts.processor,
        parts.settings.embed_batch_size,
        chunker or parts.settings.ingest.chunker,
        context_header,
        guard=parts.guard,
    )


async def load_corpus(
    workspace: Workspace,
    parts: AnswererParts,
    corpus: Path,
    *,
    on_chunks: Callable[[int], None] | None = None,
    chunker: ChunkerMode | None = None,
    context_header: bool = True,
) -> tuple[int, list[tuple[str, str]]]:
    """Ingest a folder with tuvan's pipeline; (chunks, skipped files with the reason)."""
    indexer = indexer_for(parts, chunker=chunker, context_header=context_header)
    async with workspace.sessionmaker.begin() as session:
        await ensure_index_state(session, indexer.embedder)
    report = await ingest_paths(workspace.sessionmaker, indexer, [corpus], on_chunks=on_chunks)
    return report.chunks, report.skipped


async def load_passages(
    workspace: Workspace,
    parts: AnswererParts,
    passages: Sequence[Passage],
    *,
    on_chunks: Callable[[int], None] | None = None,
    context_header: bool = True,
) -> int:
    """Index pre-cut passages as they are: one chunk each, its id kept as the chunk's id.

    Passages that name the same ``source`` become one document, in file order; a passage with
    no source is a document of its own, named by its id.
    """
    indexer = indexer_for(parts, context_header=context_header)
    groups: dict[str, list[Passage]] = {}
    for p in passages:
        groups.setdefault(p.source or p.id, []).append(p)
    async with workspace.sessionmaker.begin() as session:
        await ensure_index_state(session, indexer.embedder)
    for source, group in groups.items():
        title = next((p.title for p in group if p.title), None) or source
        drafts = [
            ChunkDraft(
                ordinal=n,
                text=p.text,
                heading_path=(p.title,) if p.title and p.title != title else (),
                page=p.page,
                token_count=indexer.embedder.count_tokens(p.text),
            )
            for n, p in enumerate(group)
        ]
        doc = LoadedDocument(
            source=source,
            title=title,
            url=None,
            language=detect_language(" ".join(p.text for p in group[:3])),
            content_hash=hashlib.sha256("\0".join(p.text for p in group).encode()).hexdigest(),
            sections=tuple(Section((), p.text, p.page) for p in group),
        )
        async with workspace.sessionmaker.begin() as session:
            await index_document(
                session,
                indexer,
                doc,
                drafts,
                external_ids=[p.id for p in group],
                progress=on_chunks,
            )
    return len(passages)


async def load_faq(
    workspace: Workspace, parts: AnswererParts, items: Sequence[FaqItem], *, enrich: bool = False
) -> None:
    """Publish the FAQ entries, each under its dataset id, with any variants it lists; with
    ``enrich``, add generated variants as `tuvan faq enrich` does (the LLM's, if configured)."""
    indexer = indexer_for(parts)
    async with workspace.sessionmaker.begin() as session:
        await ensure_index_state(session, indexer.embedder)
        for item in items:
            await upsert_faq(
                session,
                indexer,
                FaqDraft(
                    question=item.question,
                    answer=item.answer,
                    external_id=item.id,
                    source=item.source,
                    variants=list(item.variants),
                ),
            )
    if enrich:
        job = FaqParaphraseJob(workspace.sessionmaker, indexer, parts.llm, FaqParaphraseOptions())
        await job.run()


async def prepare_all(
    workspace: Workspace, parts: AnswererParts, texts: Sequence[str]
) -> tuple[list[PreparedQuery], list[np.ndarray[Any, Any]]]:
    """Every question read as the answerer reads it (restored, expanded, split), and the vectors
    of its ``dense_texts``, embedded in one go."""
    answerer = Answerer(parts, workspace.sessionmaker)
    async with workspace.sessionmaker() as session:
        prepared = [await answerer.prepare(session, t) for t in texts]
    flat = [t for p in prepared for t in p.dense_texts]
    embedded: np.ndarray[Any, Any] = np.zeros((0, parts.embedder.dimension), dtype=np.float32)
    if flat:
        embedded = await embed_off_loop(parts.embedder.embed_queries, flat)
    vectors = []
    start = 0
    for p in prepared:
        n = len(p.dense_texts)
        vectors.append(np.asarray(embedded[start : start + n]))
        start += n
    return prepared, vectors
