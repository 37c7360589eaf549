"""The FAQ store of the admin in a real PostgreSQL: the SQL fold of the search agrees with
retrieval.text.fold; a changed question flags the phrasings generated from the old one."""

from __future__ import annotations

import unicodedata
from dataclasses import replace

import pytest
from sqlalchemy import literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from admin.faq_store import EntryForm, folded, get_entry, like_pattern, save_entry
from bot.db.models import FaqVariant, VariantOrigin
from retrieval.index.indexer import Indexer
from retrieval.text.folding import fold

SAMPLES = [
    "Học phí ngành Khoa học Máy tính",
    "ĐIỂM CHUẨN năm 2025 — Đại học",
    unicodedata.normalize("NFD", "Trường Đại học Công nghệ Sông Hồng"),
    "Ký túc xá\ncòn  chỗ\tkhông?",
    "Tuition fee for 2026/2027 (USD 1,500)",
    "ữ ỹ ặ ẫ ổ ờ ụ ị ề",
]


@pytest.mark.parametrize("text", SAMPLES)
async def test_sql_fold_is_python_fold(session: AsyncSession, text: str) -> None:
    assert await session.scalar(select(folded(literal(text)))) == fold(text)


def test_like_wildcards_in_a_query_are_plain_characters() -> None:
    assert like_pattern("100%_Học\\") == "%100\\%\\_hoc\\\\%"


async def test_editing_the_question_flags_its_generated_phrasings(
    session: AsyncSession, indexer: Indexer
) -> None:
    form = EntryForm(question="Học phí ngành CNTT là bao nhiêu?", answer="30 triệu đồng.")
    entry = await save_entry(session, indexer, None, form, "staff@example.edu.vn")
    session.add(FaqVariant(faq_id=entry.id, text="hoc phi cntt", origin=VariantOrigin.generated))
    await session.flush()
    session.expunge_all()
    entry = await get_entry(session, entry.id)
    assert entry is not None

    same = EntryForm.of(entry)
    await save_entry(session, indexer, entry, same, "staff@example.edu.vn")
    flags = await session.scalars(
        select(FaqVariant.needs_review).where(
            FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.generated
        )
    )
    assert list(flags) == [False]  # an edit that keeps the question keeps the phrasings

    session.expunge_all()
    entry = await get_entry(session, entry.id)
    assert entry is not None
    changed = replace(same, question="Học phí ngành KHMT là bao nhiêu?")
    await save_entry(session, indexer, entry, changed, "staff@example.edu.vn")
    flags = await session.scalars(
        select(FaqVariant.needs_review).where(
            FaqVariant.faq_id == entry.id, FaqVariant.origin == VariantOrigin.generated
        )
    )
    assert list(flags) == [True]
