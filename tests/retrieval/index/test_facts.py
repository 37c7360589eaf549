"""A document's facts and catalogue in the store (retrieval.index.facts, retrieval.facts.book),
in a real PostgreSQL inside the test's transaction."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import CatalogueRow, Document, FactRow
from bot.db.models.facts import STAFF
from retrieval.facts.book import current_book
from retrieval.facts.model import CUTOFF, MAJOR
from retrieval.index.documents import delete_document, index_document
from retrieval.index.indexer import Indexer
from retrieval.loading import load_file

TABLE = """# Điểm chuẩn năm 2025

Điểm thi tốt nghiệp THPT, thang 30.

| Ngành | Mã ngành | THPT |
|---|---|---|
| Công nghệ Sinh học | 7420201 | 21,50 |
| Kỹ thuật Hóa học | 7520301 | 40,00 |
"""


async def _facts(session: AsyncSession, source: str) -> list[FactRow]:
    document_id = await session.scalar(select(Document.id).where(Document.source == source))
    return list(
        (await session.scalars(select(FactRow).where(FactRow.document_id == document_id))).all()
    )


async def test_ingest_stores_the_facts_and_lists_what_it_left_out(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    path = tmp_path / "diem-chuan-test.md"
    path.write_text(TABLE, encoding="utf-8")
    doc = load_file(path)
    await index_document(session, indexer, doc)
    (fact,) = await _facts(session, doc.source)
    assert (fact.major, fact.year, fact.value, fact.text) == (
        "Công nghệ Sinh học",
        2025,
        21.5,
        "21,50",
    )
    assert fact.place["row"] == 1
    assert fact.place["column"] == "THPT"
    document = await session.scalar(select(Document).where(Document.source == doc.source))
    assert document is not None
    rejected = document.meta["facts"]["rejected"]
    assert [(r["text"], r["reason"]) for r in rejected] == [("40,00", "lớn hơn thang điểm 30")]
    book = await current_book(session)
    assert any(f.major == "Công nghệ Sinh học" and f.attribute == CUTOFF for f in book.facts)
    assert book.major_named("cong nghe sinh hoc") is not None


async def test_a_staff_item_outlives_a_reingest_and_the_document_takes_its_facts_along(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    path = tmp_path / "diem-chuan-test.md"
    path.write_text(TABLE, encoding="utf-8")
    doc = load_file(path)
    await index_document(session, indexer, doc)
    session.add(CatalogueRow(kind=MAJOR, name="Công nghệ sinh học", aliases=["cnsh"], origin=STAFF))
    await session.flush()
    path.write_text(TABLE.replace("21,50", "22,00"), encoding="utf-8")
    changed = load_file(path)
    await index_document(session, indexer, changed)
    (fact,) = await _facts(session, doc.source)
    assert fact.value == 22.0  # the extracted fact follows its document
    names = (
        await session.scalars(
            select(CatalogueRow.name).where(
                CatalogueRow.kind == MAJOR, func.lower(CatalogueRow.name) == "công nghệ sinh học"
            )
        )
    ).all()
    assert names == ["Công nghệ sinh học"]  # the staff item, not the table's spelling again
    book = await current_book(session)
    assert book.majors_in("có ngành cnsh không") == [book.major_named("Công nghệ Sinh học")]
    assert await delete_document(session, doc.source)
    assert await _facts(session, doc.source) == []
    book = await current_book(session)
    assert not any(f.major == "Công nghệ Sinh học" for f in book.facts)
