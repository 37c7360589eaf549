"""Document summaries (URAG-D): what the summary-first search mode ranks documents by.

A summary is written by `tuvan augment`: the LLM's, or with ``--extractive-summaries`` the
document's own title, opening lines and headings (a baseline that needs no LLM, never presented
as more). It is stored with the content hash of the version it summarises; re-ingesting a
changed document drops it (retrieval.index.documents), and a summary of another version counts
as missing.

Functions take the session first and never commit: the caller owns the transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Document, DocumentSummary
from retrieval.chunking.base import approx_tokens
from retrieval.index.indexer import Indexer

EXTRACTIVE_OPENING_TOKENS = 90
EXTRACTIVE_HEADINGS = 12


def summary_search_text(title: str, summary: str) -> str:
    """What is embedded and keyword-indexed for a summary: the title names the document."""
    title = " ".join(title.split())
    return f"{title}\n{summary}" if title and title not in summary else summary


async def store_summary(
    session: AsyncSession,
    indexer: Indexer,
    document_id: int,
    title: str,
    content_hash: str,
    summary: str,
) -> None:
    """Insert or replace a document's summary, embedded, for the version ``content_hash``."""
    search_text = summary_search_text(title, summary)
    [vector] = await indexer.passages([search_text])
    row = await session.get(DocumentSummary, document_id)
    if row is None:
        row = DocumentSummary(document_id=document_id)
        session.add(row)
    row.summary = summary
    row.source_version = content_hash
    row.keyword_text = indexer.processor.keyword_text(search_text)
    row.embedding = vector
    await session.flush()


async def drop_summary(session: AsyncSession, document_id: int) -> None:
    await session.execute(delete(DocumentSummary).where(DocumentSummary.document_id == document_id))


async def current_summaries(session: AsyncSession, document_ids: Sequence[int]) -> dict[int, str]:
    """document id → summary, for the documents whose summary is of their present version."""
    rows = await session.execute(
        select(DocumentSummary.document_id, DocumentSummary.summary)
        .join(Document, Document.id == DocumentSummary.document_id)
        .where(
            DocumentSummary.document_id.in_(list(document_ids)),
            DocumentSummary.source_version == Document.content_hash,
        )
    )
    return {doc_id: summary for doc_id, summary in rows.all()}


def extractive_summary(title: str, chunks: Sequence[tuple[str, str]]) -> str:
    """The document described by its own words, no LLM: the opening lines, then its headings.

    ``chunks`` are (heading path, text) in reading order. Deterministic, so `tuvan augment`
    can tell such a summary from the LLM's (and replace it) by computing it again.
    """
    opening: list[str] = []
    budget = EXTRACTIVE_OPENING_TOKENS
    for _, body in chunks:
        for line in body.splitlines():
            line = " ".join(line.strip(" #*-|>").split())
            if not line or line.casefold() == title.casefold():
                continue
            opening.append(line)
            budget -= approx_tokens(line)
            if budget <= 0:
                break
        if budget <= 0:
            break
    headings: list[str] = []
    for heading_path, _ in chunks:
        for part in heading_path.split(" › "):
            part = " ".join(part.split())
            if part and part.casefold() != title.casefold() and part not in headings:
                headings.append(part)
    text = " ".join(opening)
    if budget < 0:  # cut at a word, not mid-word
        words = text.split()
        while words and approx_tokens(" ".join(words)) > EXTRACTIVE_OPENING_TOKENS:
            words.pop()
        text = " ".join(words) + " …"
    if headings:
        text = f"{text}\nMục: {'; '.join(headings[:EXTRACTIVE_HEADINGS])}".strip()
    return text or title
