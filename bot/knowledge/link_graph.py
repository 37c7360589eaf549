"""The communities of the indexed pages' link graph, found again after the pages changed
(`tuvan graph`) and stored for search mode hybrid+graph (``retrieval.graph`` does the work)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.settings import GraphSettings
from retrieval.search.graph import GraphReport, build_communities


async def find_communities(
    sessionmaker: async_sessionmaker[AsyncSession], settings: GraphSettings
) -> GraphReport:
    """Build the link graph, find its communities and store them, in one transaction."""
    async with sessionmaker.begin() as session:
        return await build_communities(session, settings)
