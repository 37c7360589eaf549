"""The bundled demo knowledge base: a fictional university's admission handbook and FAQ."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import Document, FaqEntry
from bot.knowledge.faq_files import import_faq, read_faq_file
from bot.knowledge.ingest import ingest_paths
from bot.knowledge.jobs import Progress
from retrieval.index.indexer import Indexer


def demo_kb_dir() -> Path:
    return Path(str(resources.files("bot.knowledge") / "demo_kb"))


async def load_demo_kb(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    progress: Progress | None = None,
    announce: Callable[[str], None] | None = None,
) -> str:
    """Load the demo documents and FAQ into an empty store; '' when the store had content.
    ``announce`` hears that the embedding starts (40 s on 2 cores)."""
    async with sessionmaker() as session:
        faqs = await session.scalar(select(func.count()).select_from(FaqEntry))
        docs = await session.scalar(select(func.count()).select_from(Document))
    if faqs or docs:
        return ""
    kb = demo_kb_dir()
    if announce is not None:
        announce("first start: embedding the demo knowledge base (once; under a minute on 2 cores)")
    report = await ingest_paths(sessionmaker, indexer, [kb / "docs"], on_chunks=progress)
    drafts = read_faq_file(kb / "faq.jsonl")
    await import_faq(sessionmaker, indexer, drafts, updated_by="demo", progress=progress)
    return f"{len(report.indexed)} documents ({report.chunks} chunks), {len(drafts)} FAQ entries"
