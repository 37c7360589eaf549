"""Document summaries without an LLM (`tuvan augment --extractive-summaries`): each document's
title, opening lines and headings.

A baseline for the summary-first search mode, not URAG-D: it says only what the document's start
and headings say. An LLM summary is kept unless ``force``; `tuvan augment` with an LLM
(``document_augment``) replaces these. One transaction per document. The job has the shape of
the offline jobs (``bot.knowledge.jobs.OfflineJob``) and reports as ``document_augment`` does.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.knowledge.document_augment import DocumentAugmentOptions, DocumentAugmentReport
from bot.knowledge.jobs import ProgressBars, no_progress
from bot.knowledge.stored_documents import DocumentRow, load_documents
from retrieval.index.indexer import Indexer
from retrieval.index.summaries import store_summary


class ExtractiveSummaryJob:
    """Extractive summaries for the documents ``options`` select (its ``force`` redoes them)."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        indexer: Indexer,
        options: DocumentAugmentOptions,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.indexer = indexer
        self.options = options

    async def _todo(self) -> tuple[DocumentAugmentReport, list[DocumentRow]]:
        async with self.sessionmaker() as session:
            docs = await load_documents(session, self.options.sources)
        todo = [d for d in docs if self.options.force or d.summary is None]
        return DocumentAugmentReport(documents=len(docs), planned=len(todo)), todo

    async def plan(self) -> DocumentAugmentReport:
        """The documents matched and the summaries a run would write."""
        report, _ = await self._todo()
        return report

    async def run(self, bars: ProgressBars = no_progress) -> DocumentAugmentReport:
        report, todo = await self._todo()
        progress = bars("summaries", report.planned)
        for doc in todo:
            async with self.sessionmaker.begin() as session:
                await store_summary(
                    session, self.indexer, doc.id, doc.title, doc.content_hash, doc.extractive
                )
            report.summaries += 1
            progress(1)
        return report
