"""One answer of the "Cần xem lại" queue opened: what was asked and answered, from where, and
what staff can attach the question to.

- *Sources*: the reply's stored citations as a reader sees them (title, public web address,
  page; never the server's path of a file, bot.core.citations), each matched to its document
  by ``documents.source`` so "sửa tài liệu" can open it on the Documents page.
- *The FAQ entry that answered*: ``details.faq_id`` (stored since 6/6), else the entry with the
  stored ``faq_external_id``, else, for an older FAQ-tier reply, the entry whose answer the
  reply is (FAQ answers are sent verbatim).
- *Entries to add the question to*: that entry first, then the entries nearest to the
  question by meaning (its query embedding, cached by admin.question_groups.QuestionVectors).
- *How the message was read* (admin.readings) and the scorer's confidence (admin.confidence),
  when the reply carries them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from admin.question_groups import QuestionVectors
from admin.readings import Reading, parse_reading
from admin.recheck_queue import RecheckItem, queue_item
from bot.core.citations import citation_label, public_url
from bot.db.models import Document, FaqEntry, Message
from bot.runtime import Runtime
from retrieval.search.dense import vector_literal

SUGGESTIONS = 5

_NEAREST_ENTRIES = text(
    """
    SELECT id, question FROM faq_entries WHERE embedding IS NOT NULL
    ORDER BY embedding <=> :q LIMIT :n
    """
)


@dataclass(frozen=True)
class Source:
    n: int
    title: str
    url: str | None  # http(s) only
    page: int | None
    document_id: int | None  # the document it quotes, when it is one
    document_title: str | None


@dataclass(frozen=True)
class EntryChoice:
    id: int
    question: str


@dataclass(frozen=True)
class AnswerDetail:
    item: RecheckItem
    answer: str
    reason: str  # the answerer's own note (English): technical details only
    scores: dict[str, Any]
    reading: Reading | None  # how the student's message was read, when stored
    reading_data: str  # the stored value as JSON ("" when none): technical details only
    sources: list[Source]
    entry: EntryChoice | None  # the FAQ entry that answered
    suggestions: list[EntryChoice]  # other entries close to the question


async def _sources(session: AsyncSession, citations: list[Any]) -> list[Source]:
    stored = [c for c in citations if isinstance(c, dict)]
    paths = [str(c.get("source") or "") for c in stored if c.get("source")]
    documents: dict[str, Document] = {}
    if paths:
        found = await session.scalars(select(Document).where(Document.source.in_(paths)))
        documents = {d.source: d for d in found}
    out = []
    for i, c in enumerate(stored, start=1):
        document = documents.get(str(c.get("source") or ""))
        page = c.get("page")
        out.append(
            Source(
                n=int(c.get("n") or i),
                title=citation_label(str(c.get("title") or ""), str(c.get("source") or "")),
                url=public_url(c.get("url") if isinstance(c.get("url"), str) else None),
                page=page if isinstance(page, int) else None,
                document_id=document.id if document else None,
                document_title=(
                    citation_label(document.title, document.source) if document else None
                ),
            )
        )
    return out


async def answering_entry(session: AsyncSession, reply: Message) -> FaqEntry | None:
    """The FAQ entry a reply came from, if it came from one that still exists."""
    details = reply.details if isinstance(reply.details, dict) else {}
    faq_id = details.get("faq_id")
    if isinstance(faq_id, int):
        return await session.get(FaqEntry, faq_id)
    external = details.get("faq_external_id")
    if isinstance(external, str) and external:
        found = await session.scalar(select(FaqEntry).where(FaqEntry.external_id == external))
        if found is not None:
            return found
    if reply.tier != "faq":
        return None
    return await session.scalar(
        select(FaqEntry).where(FaqEntry.answer == reply.text).order_by(FaqEntry.id).limit(1)
    )


async def answer_detail(
    rt: Runtime, vectors: QuestionVectors, message_id: int
) -> AnswerDetail | None:
    """The bot answer ``message_id`` opened, or None when it is no bot answer to a question."""
    async with rt.sessionmaker() as session:
        item = await queue_item(
            session, message_id, rt.parts.processor, review_below=rt.settings.admin.review_below
        )
        reply = await session.get(Message, message_id)
        if item is None or reply is None:
            return None
        entry = await answering_entry(session, reply)
        sources = await _sources(session, list(reply.citations or []))
    [vector] = await vectors.embed(rt.parts.embedder, rt.parts.processor, [item.question])
    async with rt.sessionmaker() as session:
        rows = await session.execute(
            _NEAREST_ENTRIES, {"q": vector_literal(vector), "n": SUGGESTIONS + 1}
        )
        nearest = [EntryChoice(r.id, r.question) for r in rows]
    chosen = EntryChoice(entry.id, entry.question) if entry is not None else None
    details = reply.details if isinstance(reply.details, dict) else {}
    scores = details.get("scores")
    return AnswerDetail(
        item=item,
        answer=reply.text,
        reason=str(details.get("reason") or ""),
        scores=scores if isinstance(scores, dict) else {},
        reading=parse_reading(details.get("reading")),
        reading_data=(
            json.dumps(details["reading"], ensure_ascii=False, indent=1)
            if details.get("reading") is not None
            else ""
        ),
        sources=sources,
        entry=chosen,
        suggestions=[e for e in nearest if chosen is None or e.id != chosen.id][:SUGGESTIONS],
    )
