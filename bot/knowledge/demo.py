"""The bundled demo knowledge base: a fictional university's admission handbook and FAQ."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import Document, FaqEntry
from bot.knowledge.faq_files import read_faq_file
from bot.knowledge.ingest import ingest_paths
from retrieval.index.faq_entries import upsert_faq
from retrieval.index.indexer import Indexer


def demo_kb_dir() -> Path:
    return Path(str(resources.files("bot.knowledge") / "demo_kb"))


async def load_demo_kb(
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    progress: Callable[[int], None] | None = None,
) -> str:
    """Load the demo documents and FAQ into an empty store; '' when the store had content."""
    async with sessionmaker() as session:
        faqs = await session.scalar(select(func.count()).select_from(FaqEntry))
        docs = await session.scalar(select(func.count()).select_from(Document))
    if faqs or docs:
        return ""
    kb = demo_kb_dir()
    report = await ingest_paths(sessionmaker, indexer, [kb / "docs"], on_chunks=progress)
    drafts = read_faq_file(kb / "faq.jsonl")
    async with sessionmaker.begin() as session:
        for draft in drafts:
            draft.updated_by = "demo"
            await upsert_faq(session, indexer, draft)
            if progress:
                progress(1)
    return f"{len(report.indexed)} documents ({report.chunks} chunks), {len(drafts)} FAQ entries"
