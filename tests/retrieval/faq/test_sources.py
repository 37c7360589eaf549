"""The ingested document an FAQ entry names as its source (retrieval.faq.sources), on the real
database: by a file's name, a relative path, the whole path, a web address, the document it was
drafted from; nothing for a file tuvan never read or a title."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Document, FaqEntry, FaqStatus
from retrieval.faq.sources import SourceDocument, source_documents

PLAN = SourceDocument(
    "Đề án tuyển sinh 2026", "/srv/kb/2026/de-an-tsx.pdf", "https://ts.example.vn/de-an"
)
FEES = SourceDocument("Học phí 2026", "C:\\kb\\hoc-phi-tsx.docx", None)
PAGE = SourceDocument("Ký túc xá", "https://ts.example.vn/ktx-tsx", "https://ts.example.vn/ktx-tsx")


async def add_document(session: AsyncSession, doc: SourceDocument) -> int:
    row = Document(source=doc.source, title=doc.title, url=doc.url, content_hash="0" * 64)
    session.add(row)
    await session.flush()
    return row.id


async def add_entry(
    session: AsyncSession,
    source: str | None,
    source_url: str | None = None,
    document_id: int | None = None,
) -> int:
    entry = FaqEntry(
        question=f"Câu hỏi về {source}?",
        answer="Câu trả lời.",
        source=source,
        source_url=source_url,
        status=FaqStatus.published,
        source_document_id=document_id,
    )
    session.add(entry)
    await session.flush()
    return entry.id


@pytest.mark.parametrize(
    ("source", "source_url", "expected"),
    [
        ("de-an-tsx.pdf", None, PLAN),  # a file's name alone
        ("2026/de-an-tsx.pdf", None, PLAN),  # a relative path
        ("/srv/kb/2026/de-an-tsx.pdf", None, PLAN),  # the whole path
        ("hoc-phi-tsx.docx", None, FEES),  # a Windows path's file name
        ("https://ts.example.vn/ktx-tsx", None, PAGE),  # a page tuvan crawled
        ("https://ts.example.vn/de-an", None, PLAN),  # a document's public address
        ("Đề án", "https://ts.example.vn/de-an", PLAN),  # the entry's address is a document's
        ("an-tsx.pdf", None, None),  # part of a name is not the name
        ("khong-co-tsx.md", None, None),  # a file tuvan never read
        ("Phòng tuyển sinh", None, None),  # a title, no document
        (None, None, None),
    ],
)
async def test_an_entry_finds_the_document_its_source_names(
    session: AsyncSession,
    source: str | None,
    source_url: str | None,
    expected: SourceDocument | None,
) -> None:
    for doc in (PLAN, FEES, PAGE):
        await add_document(session, doc)
    faq_id = await add_entry(session, source, source_url)
    found = await source_documents(session, [faq_id])
    assert found.get(faq_id) == expected


async def test_the_document_an_entry_was_drafted_from_comes_first(session: AsyncSession) -> None:
    plan = await add_document(session, PLAN)
    await add_document(session, FEES)
    # Its source names another document's file: the one it was drafted from still wins.
    faq_id = await add_entry(session, "hoc-phi-tsx.docx", document_id=plan)
    assert await source_documents(session, [faq_id]) == {faq_id: PLAN}


async def test_an_exact_source_wins_over_a_file_of_the_same_name(session: AsyncSession) -> None:
    elsewhere = SourceDocument("Bản cũ", "/old/kb-tsx/de-an-tsx.pdf", None)
    await add_document(session, PLAN)
    await add_document(session, elsewhere)
    faq_id = await add_entry(session, "/old/kb-tsx/de-an-tsx.pdf")
    assert await source_documents(session, [faq_id]) == {faq_id: elsewhere}


async def test_no_entries_ask_nothing(session: AsyncSession) -> None:
    assert await source_documents(session, []) == {}
