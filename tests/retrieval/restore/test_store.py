"""The restorer of the current knowledge (retrieval.restore.store) in a real PostgreSQL: learned
from chunks and FAQ, stored for the other processes, learned again when the knowledge changes."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.parts import AnswererParts
from bot.db.models import TextModel
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer
from retrieval.restore import store as restorer_store
from retrieval.restore.store import RESTORER, current_restorer, knowledge_signature


async def test_the_restorer_is_learned_once_stored_and_shared(
    sessionmaker: async_sessionmaker[AsyncSession], parts: AnswererParts, demo_kb: object
) -> None:
    expansions = parts.processor.dense_expansions
    restorer_store.clear_restorer_cache()
    async with sessionmaker() as session:
        first = await current_restorer(session, sessionmaker, expansions)
        assert first.restore("hoc phi chuong trinh chuan").text == "học phí chương trình chuẩn"
        assert await current_restorer(session, sessionmaker, expansions) is first
        signature = await knowledge_signature(session)
        stored = await session.scalar(select(TextModel).where(TextModel.name == RESTORER))
        assert stored is not None
        assert stored.signature == signature
    # Another process (an empty cache) loads the stored counts instead of learning them.
    restorer_store.clear_restorer_cache()
    async with sessionmaker() as session:
        again = await current_restorer(session, sessionmaker, expansions)
        assert again is not first
        assert again.knowledge.bigrams == first.knowledge.bigrams
        rows = await session.scalar(select(func.count()).select_from(TextModel))
        assert rows == 1


async def test_a_new_faq_entry_teaches_the_restorer_its_words(
    sessionmaker: async_sessionmaker[AsyncSession],
    session: AsyncSession,
    parts: AnswererParts,
    indexer: Indexer,
    demo_kb: object,
) -> None:
    expansions = parts.processor.dense_expansions
    before = await current_restorer(session, sessionmaker, expansions)
    # "khảm" (inlay) is in no demo document; the lexicon offers "khám", "khâm", "khấm"...
    assert before.restore("lop hoc kham trai").text != "lớp học khảm trai"
    await upsert_faq(
        session,
        indexer,
        FaqDraft(
            question="Trường có lớp học khảm trai không?",
            answer="Câu lạc bộ mỹ thuật mở lớp học khảm trai vào thứ Bảy.",
        ),
    )
    await session.flush()
    after = await current_restorer(session, sessionmaker, expansions)
    assert after is not before
    assert after.restore("lop hoc kham trai").text == "lớp học khảm trai"
