"""What the answerer tests share."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer.extractive import select_quotes
from bot.answer.parts import AnswererParts
from bot.answer.reading import read_question
from retrieval.index.documents import index_document
from retrieval.index.indexer import Indexer
from retrieval.loading import load_file
from retrieval.search.hits import Hit


def with_answer_settings(parts: AnswererParts, **changes: object) -> AnswererParts:
    answer = parts.settings.answer.model_copy(update=changes)
    return replace(parts, settings=parts.settings.model_copy(update={"answer": answer}))


def verbatim_only(parts: AnswererParts, **changes: object) -> AnswererParts:
    """``parts`` with no fitted tier-1 scorer: only a stored phrasing typed word for word gets
    its entry; every other question goes on to the documents."""
    parts = with_answer_settings(parts, **changes) if changes else parts
    return replace(parts, decisions=replace(parts.decisions, faq=None))


async def ingest_text(session: AsyncSession, indexer: Indexer, path: Path, text: str) -> int:
    """``text`` written to ``path`` and indexed as a document in the test's transaction; its id."""
    await asyncio.to_thread(path.write_text, text, encoding="utf-8")
    return (await index_document(session, indexer, load_file(path))).document_id


def hit(text: str, *, title: str = "Tuyển sinh 2026", heading: str = "", n: int = 1) -> Hit:
    return Hit(
        chunk_id=n,
        document_id=n,
        text=text,
        heading_path=heading,
        page=None,
        ordinal=0,
        external_id=None,
        title=title,
        source=f"doc{n}.md",
        url=None,
        similarity=0.9,
        score=1.0,
    )


def quotes_for(parts: AnswererParts, question: str, *hits: Hit, limit: int = 4) -> list[str]:
    guard = parts.guard
    return [
        q.text
        for q in select_quotes(
            parts.processor.query_terms(question),
            list(hits),
            parts.processor,
            limit=limit,
            reading=read_question(question, guard, parts.processor),
            guard=guard,
        )
    ]
