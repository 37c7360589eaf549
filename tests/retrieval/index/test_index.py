"""Writing the knowledge store (retrieval.index) in a real PostgreSQL, inside the test's
transaction: the session-wide demo knowledge base is the same afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.answer.answerer import AnswererParts
from bot.core.errors import IndexMismatchError
from bot.db.models import (
    Chunk,
    Document,
    FaqEntry,
    FaqOrigin,
    FaqVariant,
    IndexState,
    VariantOrigin,
)
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.faq_files import read_faq_file
from retrieval.embedders.openai_endpoint import OpenAIEmbedder
from retrieval.faq.candidates import faq_candidates
from retrieval.faq.lexicon import faq_lexicon
from retrieval.index.documents import delete_document, index_document
from retrieval.index.faq_entries import FaqDraft, set_variants, upsert_faq
from retrieval.index.indexer import Indexer
from retrieval.index.reindex import count_embeddable, reindex
from retrieval.index.state import ensure_index_state, faq_needs_reindex
from retrieval.loading import load_file
from tests.fakes.openai_stub import OpenAIStub, start_openai_stub

VECTOR_TABLES = ("faq_entries", "faq_variants", "chunks")
HNSW_INDEXES = {f"ix_{t}_embedding_hnsw" for t in VECTOR_TABLES}

HANDBOOK = """\
# Sổ tay tân sinh viên

## Thẻ sinh viên
Thẻ sinh viên được cấp trong tuần đầu nhập học tại phòng Công tác sinh viên.

## Gửi xe
Bãi gửi xe mở cửa từ 6:00 đến 22:00; phí gửi xe máy là 3.000 đồng mỗi lượt.
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


async def chunk_rows(session: AsyncSession, document_id: int) -> list[tuple[int, str]]:
    rows = await session.execute(
        select(Chunk.id, Chunk.text).where(Chunk.document_id == document_id).order_by(Chunk.id)
    )
    return [(r.id, r.text) for r in rows]


async def vector_columns(session: AsyncSession) -> dict[str, tuple[int, str]]:
    """Each vector column's declared dimension (pgvector keeps it in atttypmod) and storage."""
    rows = await session.execute(
        text(
            "SELECT c.relname, a.atttypmod, a.attstorage FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE a.attname = 'embedding' AND c.relname = ANY(:tables)"
        ),
        {"tables": list(VECTOR_TABLES)},
    )
    return {name: (int(mod), str(storage)) for name, mod, storage in rows}


async def dimensions(session: AsyncSession) -> dict[str, int]:
    return {name: dim for name, (dim, _) in (await vector_columns(session)).items()}


async def embedding_storage(session: AsyncSession) -> dict[str, str]:
    return {name: storage for name, (_, storage) in (await vector_columns(session)).items()}


async def test_vectors_are_stored_in_the_row(session: AsyncSession) -> None:
    # Migration 0002: MAIN, not pgvector's EXTERNAL, so that heap distances skip TOAST.
    assert await embedding_storage(session) == dict.fromkeys(VECTOR_TABLES, "m")


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


# -- the record of the embedder ----------------------------------------------------------------


async def empty_the_store(session: AsyncSession) -> None:
    """Inside the test's transaction only: the rollback brings everything back."""
    for table in ("index_state", "faq_entries", "documents"):  # variants, chunks cascade
        await session.execute(text(f"DELETE FROM {table}"))


async def test_empty_store_records_the_configured_embedder(
    session: AsyncSession, indexer: Indexer
) -> None:
    await empty_the_store(session)
    state = await ensure_index_state(session, indexer.embedder)
    assert (state.embedder, state.dimension) == (indexer.embedder.name, 384)
    stored = (await session.execute(select(IndexState.embedder, IndexState.dimension))).all()
    assert stored == [(indexer.embedder.name, 384)]
    assert await ensure_index_state(session, indexer.embedder) is state  # now just a check


async def test_vectors_without_a_record_ask_for_reindex(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    await empty_the_store(session)
    await index_document(session, indexer, load_file(write(tmp_path / "a.md", HANDBOOK)))
    with pytest.raises(IndexMismatchError, match="tuvan reindex"):
        await ensure_index_state(session, indexer.embedder)


@pytest.mark.parametrize(
    "change",
    [
        "embedder = 'sentence-transformers:/models/other'",
        "dimension = 768",
    ],
)
async def test_recorded_embedder_that_differs_raises_index_mismatch(
    session: AsyncSession, indexer: Indexer, change: str
) -> None:
    await ensure_index_state(session, indexer.embedder)
    await session.execute(text(f"UPDATE index_state SET {change}"))
    session.expire_all()
    with pytest.raises(IndexMismatchError, match="tuvan reindex") as caught:
        await ensure_index_state(session, indexer.embedder)
    assert indexer.embedder.name in str(caught.value)


# -- re-embedding with another model ------------------------------------------------------------


@pytest.fixture
async def stub() -> AsyncIterator[OpenAIStub]:
    server = await start_openai_stub(dimension=8)
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def stub_embedder(stub: OpenAIStub) -> AsyncIterator[OpenAIEmbedder]:
    # The constructor asks the server for the dimension with a blocking client: off the loop
    # that serves the stub.
    embedder = await asyncio.to_thread(
        lambda: OpenAIEmbedder(
            "stub-model", base_url=stub.base_url, api_key=SecretStr("k"), max_retries=0
        )
    )
    try:
        yield embedder
    finally:
        embedder.close()


async def test_reindex_with_another_dimension_re_embeds_everything_and_rolls_back(
    engine: AsyncEngine,
    parts: AnswererParts,
    indexer: Indexer,
    demo_kb: dict[str, int],
    stub_embedder: OpenAIEmbedder,
) -> None:
    assert stub_embedder.dimension == 8
    stub_indexer = Indexer(stub_embedder, parts.processor, batch_size=64)
    question = read_faq_file(demo_kb_dir() / "faq.jsonl")[0].question
    async with engine.connect() as conn:
        outer = await conn.begin()
        try:
            sm = async_sessionmaker(
                bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False
            )
            async with sm() as session:
                entry = await session.get(FaqEntry, demo_kb["shut-faq01"])
                assert entry is not None
                await set_variants(session, indexer, entry, ["ma truong shut la gi"])
                # A copy without diacritics as tuvan stored them before 2/6: reindex drops it.
                await set_variants(
                    session, indexer, entry, ["ma truong la gi"], VariantOrigin.folded
                )
                total = await count_embeddable(session)
                assert await faq_needs_reindex(session)  # the start-up warning's test

                assert await reindex(session, stub_indexer) == total - 1
                assert not await faq_needs_reindex(session)
                folded = await session.scalar(
                    select(func.count())
                    .select_from(FaqVariant)
                    .where(FaqVariant.origin == VariantOrigin.folded)
                )
                assert folded == 0

                assert await dimensions(session) == dict.fromkeys(VECTOR_TABLES, 8)
                for table in VECTOR_TABLES:
                    rows, stale = (
                        await session.execute(
                            text(
                                "SELECT count(*), count(*) FILTER (WHERE embedding IS NULL "
                                f"OR vector_dims(embedding) <> 8) FROM {table}"
                            )
                        )
                    ).one()
                    assert rows > 0, table
                    assert stale == 0, table
                indexes = await session.execute(
                    text("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(:n)"),
                    {"n": list(HNSW_INDEXES)},
                )
                assert {n for n, d in indexes if "hnsw (embedding vector_cosine_ops)" in d} == (
                    HNSW_INDEXES
                )
                assert await embedding_storage(session) == dict.fromkeys(VECTOR_TABLES, "m")
                session.expire_all()
                state = await ensure_index_state(session, stub_embedder)
                assert (state.embedder, state.dimension, state.thresholds) == (
                    "openai:stub-model",
                    8,
                    {},
                )
                with pytest.raises(IndexMismatchError, match="tuvan reindex"):
                    await ensure_index_state(session, indexer.embedder)
                [vector] = await asyncio.to_thread(stub_embedder.embed_queries, [question])
                # No verbatim match (empty text): the stored question was embedded as a query.
                best = (await faq_candidates(session, parts.processor, "", [], vector, limit=3))[0]
                assert best.faq_id == demo_kb["shut-faq01"]
                assert not best.verbatim
                assert best.similarity == pytest.approx(1.0, abs=1e-4)
        finally:
            await outer.rollback()

    # ALTER TABLE is transactional in PostgreSQL: the rollback restored the 384-d store.
    async with AsyncSession(engine) as session:
        assert await dimensions(session) == dict.fromkeys(VECTOR_TABLES, 384)
        recorded = await session.get(IndexState, 1)
        assert recorded is not None
        assert (recorded.embedder, recorded.dimension) == (indexer.embedder.name, 384)
        stale = await session.scalar(
            text("SELECT count(*) FROM chunks WHERE vector_dims(embedding) <> 384")
        )
        assert stale == 0


# -- FAQ ----------------------------------------------------------------------------------------


async def test_faq_upsert_by_external_id_updates_and_re_embeds(
    session: AsyncSession, indexer: Indexer
) -> None:
    first = await upsert_faq(
        session,
        indexer,
        FaqDraft(
            question="Sinh viên gửi xe máy ở đâu?",
            answer="Ở bãi xe khu B.",
            external_id="t-gui-xe",
            variants=["gui xe o dau", "bãi xe ở đâu"],
        ),
    )
    await set_variants(session, indexer, first, ["gửi xe máy"], VariantOrigin.generated)
    new_question = "Phí gửi xe máy mỗi lượt của sinh viên là bao nhiêu tiền?"
    second = await upsert_faq(
        session,
        indexer,
        FaqDraft(
            question=new_question,
            answer="3.000 đồng mỗi lượt.",
            external_id="t-gui-xe",
            variants=["phi gui xe bao nhieu"],
            updated_by="staff@example.vn",
        ),
    )
    assert second.id == first.id
    rows = (
        await session.execute(
            select(FaqEntry.question, FaqEntry.answer, FaqEntry.updated_by).where(
                FaqEntry.external_id == "t-gui-xe"
            )
        )
    ).all()
    assert rows == [(new_question, "3.000 đồng mỗi lượt.", "staff@example.vn")]

    variants = (
        await session.execute(
            select(FaqVariant.origin, FaqVariant.text)
            .where(FaqVariant.faq_id == first.id)
            .order_by(FaqVariant.origin, FaqVariant.text)
        )
    ).all()
    assert sorted((o.value, t) for o, t in variants) == [
        ("generated", "gửi xe máy"),  # only the staff variants were replaced
        ("staff", "phi gui xe bao nhieu"),
    ]

    [vector] = await asyncio.to_thread(indexer.embedder.embed_queries, [new_question])
    best = (await faq_candidates(session, indexer.processor, "", [], vector, limit=3))[0]
    assert best.faq_id == first.id
    assert best.matched_text == new_question
    assert best.similarity == pytest.approx(1.0, abs=1e-4)  # stored as a query, like the question


async def test_a_stored_phrasing_typed_without_marks_matches_verbatim_and_no_copy_is_kept(
    session: AsyncSession, indexer: Indexer
) -> None:
    vi = await upsert_faq(
        session,
        indexer,
        FaqDraft(
            question="Ký túc xá có máy giặt chung không?",
            answer="Mỗi tầng có hai máy giặt.",
            variants=["Phòng ở ký túc xá có máy lạnh không?"],
        ),
    )
    folded = await session.scalar(
        select(func.count())
        .select_from(FaqVariant)
        .where(FaqVariant.origin == VariantOrigin.folded, FaqVariant.faq_id == vi.id)
    )
    assert folded == 0
    asked = "phong o ky tuc xa co may lanh khong"
    [vector] = await asyncio.to_thread(indexer.embedder.embed_queries, [asked])
    terms = indexer.processor.query_terms(asked)
    best = (await faq_candidates(session, indexer.processor, asked, terms, vector, limit=3))[0]
    assert (best.faq_id, best.verbatim, best.similarity) == (vi.id, True, 1.0)
    # One word more is no longer the same phrasing.
    other = f"{asked} vay"
    best = (await faq_candidates(session, indexer.processor, other, terms, vector, limit=3))[0]
    assert best.faq_id == vi.id
    assert not best.verbatim


async def test_candidates_carry_the_stored_answer_not_the_lexicon_copy(
    session: AsyncSession, indexer: Indexer
) -> None:
    # The lexicon learns of a change within seconds (table counters); the answer a student
    # gets must be the one stored now. A stale copy in the lexicon must not leak out.
    entry = await upsert_faq(
        session,
        indexer,
        FaqDraft(question="Nhà xe mở cửa lúc mấy giờ?", answer="Từ 6 giờ đến 22 giờ."),
    )
    asked = "Nhà xe mở cửa lúc mấy giờ?"
    [vector] = await asyncio.to_thread(indexer.embedder.embed_queries, [asked])
    terms = indexer.processor.query_terms(asked)
    first = await faq_candidates(session, indexer.processor, asked, terms, vector, limit=3)
    assert first[0].faq_id == entry.id
    lexicon = await faq_lexicon(session, indexer.processor)
    known = lexicon.entries[entry.id]
    lexicon.entries[entry.id] = replace(known, answer="(a copy gone stale)")
    again = await faq_candidates(session, indexer.processor, asked, terms, vector, limit=3)
    assert again[0].answer == "Từ 6 giờ đến 22 giờ."
