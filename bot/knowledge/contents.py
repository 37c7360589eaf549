"""What the knowledge base holds, in two numbers: published FAQ entries and indexed documents.

With both at zero every question gets the fallback, so the commands that answer (``tuvan ask``,
``chat``, ``serve``, ``demo --no-demo-data``) say so at start, with the commands that load one."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import Document, FaqEntry, FaqStatus


@dataclass(frozen=True)
class KnowledgeSize:
    faq_entries: int  # published: drafts are never answered
    documents: int

    @property
    def empty(self) -> bool:
        return self.faq_entries == 0 and self.documents == 0


async def knowledge_size(sessionmaker: async_sessionmaker[AsyncSession]) -> KnowledgeSize:
    async with sessionmaker() as session:
        faq = await session.scalar(
            select(func.count()).select_from(FaqEntry).where(FaqEntry.status == FaqStatus.published)
        )
        documents = await session.scalar(select(func.count()).select_from(Document))
    return KnowledgeSize(faq_entries=faq or 0, documents=documents or 0)
