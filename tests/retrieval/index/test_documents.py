"""Documents written to the store (retrieval.index.documents) in a real PostgreSQL, inside the
test's transaction: the session-wide demo knowledge base is the same afterwards."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import (
    Chunk,
    Document,
    FaqEntry,
    FaqOrigin,
    FaqVariant,
    VariantOrigin,
)
from retrieval.index.documents import delete_document, index_document
from retrieval.index.indexer import Indexer
from retrieval.loading import load_file
from tests.retrieval._support import write
from tests.retrieval.index._support import (
    HANDBOOK,
)


async def chunk_rows(session: AsyncSession, document_id: int) -> list[tuple[int, str]]:
    rows = await session.execute(
        select(Chunk.id, Chunk.text).where(Chunk.document_id == document_id).order_by(Chunk.id)
    )
    return [(r.id, r.text) for r in rows]


# -- documents --------------------------------------------------------------------------------


async def test_reindexing_an_unchanged_document_is_a_no_op(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    doc = load_file(write(tmp_path / "so-tay.md", HANDBOOK))
    first = await index_document(session, indexer, doc)
    assert not first.unchanged
    assert first.chunks >= 1
    before = await chunk_rows(session, first.document_id)

    again = await index_document(session, indexer, load_file(tmp_path / "so-tay.md"))
    assert again.unchanged
    assert (again.document_id, again.chunks) == (first.document_id, first.chunks)
    assert await chunk_rows(session, first.document_id) == before  # same rows, not re-made


async def test_changed_document_replaces_its_chunks(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    path = write(tmp_path / "so-tay.md", HANDBOOK)
    first = await index_document(session, indexer, load_file(path))
    old = await chunk_rows(session, first.document_id)

    write(path, HANDBOOK.replace("3.000 đồng", "5.000 đồng"))
    second = await index_document(session, indexer, load_file(path))
    assert not second.unchanged
    assert second.document_id == first.document_id
    new = await chunk_rows(session, first.document_id)
    assert len(new) == second.chunks
    assert not {cid for cid, _ in old} & {cid for cid, _ in new}
    body = "\n".join(t for _, t in new)
    assert "5.000 đồng" in body
    assert "3.000 đồng" not in body
    documents = await session.scalar(
        select(func.count()).select_from(Document).where(Document.source == str(path))
    )
    assert documents == 1


async def test_deleting_a_document_cascades_to_its_chunks(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    path = write(tmp_path / "so-tay.md", HANDBOOK)
    result = await index_document(session, indexer, load_file(path))
    assert await delete_document(session, str(path))
    remaining = await session.scalar(
        select(func.count()).select_from(Chunk).where(Chunk.document_id == result.document_id)
    )
    assert remaining == 0
    assert not await delete_document(session, str(path))


async def generated_entry(session: AsyncSession, document_id: int) -> FaqEntry:
    chunk_id, chunk_text = (await chunk_rows(session, document_id))[0]
    entry = FaqEntry(
        question="Phí gửi xe máy là bao nhiêu?",
        answer="3.000 đồng mỗi lượt.",
        origin=FaqOrigin.generated,
        source_document_id=document_id,
        source_chunk_id=chunk_id,
        source_text=chunk_text,
        source_version="v1",
    )
    entry.variants = [
        FaqVariant(text="phi gui xe bao nhieu", origin=VariantOrigin.generated),
        FaqVariant(text="Gửi xe mất bao nhiêu tiền?", origin=VariantOrigin.staff),
    ]
    session.add(entry)
    await session.flush()
    return entry


async def test_a_changed_source_flags_what_was_generated_from_it(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    path = write(tmp_path / "so-tay.md", HANDBOOK)
    first = await index_document(session, indexer, load_file(path))
    entry = await generated_entry(session, first.document_id)
    assert not entry.needs_review

    write(path, HANDBOOK.replace("3.000 đồng", "5.000 đồng"))
    await index_document(session, indexer, load_file(path))
    await session.refresh(entry, ["needs_review", "review_note", "source_chunk_id"])
    assert entry.needs_review
    assert "so-tay.md" in str(entry.review_note)
    assert entry.source_chunk_id is None  # the chunk was replaced; its text is kept
    assert "3.000 đồng" in str(entry.source_text)
    flags = dict(
        (
            await session.execute(
                select(FaqVariant.origin, FaqVariant.needs_review).where(
                    FaqVariant.faq_id == entry.id
                )
            )
        ).all()
    )
    assert flags == {VariantOrigin.generated: True, VariantOrigin.staff: False}


async def test_another_chunker_re_cuts_an_unchanged_document_without_flagging(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    path = write(tmp_path / "so-tay.md", HANDBOOK)
    first = await index_document(session, indexer, load_file(path))
    entry = await generated_entry(session, first.document_id)
    other = replace(indexer, chunker="semantic")

    recut = await index_document(session, other, load_file(path))
    assert not recut.unchanged  # same content, another chunker: cut again
    assert recut.document_id == first.document_id
    document = await session.get(Document, first.document_id)
    assert document is not None
    assert document.meta["chunker"] == "semantic"
    await session.refresh(entry, ["needs_review"])
    assert not entry.needs_review  # the content did not change

    again = await index_document(session, other, load_file(path))
    assert again.unchanged


async def test_removing_a_source_removes_what_was_generated_from_it(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    path = write(tmp_path / "so-tay.md", HANDBOOK)
    first = await index_document(session, indexer, load_file(path))
    entry_id = (await generated_entry(session, first.document_id)).id
    session.expunge_all()
    assert await delete_document(session, str(path))
    assert await session.get(FaqEntry, entry_id) is None
    left = await session.scalar(
        select(func.count()).select_from(FaqVariant).where(FaqVariant.faq_id == entry_id)
    )
    assert left == 0
