"""FAQ entries written to the store (retrieval.index.faq_entries) in a real PostgreSQL, inside
the test's transaction: the session-wide demo knowledge base is the same afterwards."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import date

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import (
    FaqEntry,
    FaqVariant,
    VariantOrigin,
)
from retrieval.faq.candidates import faq_candidates
from retrieval.faq.lexicon import faq_lexicon
from retrieval.index.faq_entries import (
    FaqDraft,
    FaqValidity,
    set_variants,
    upsert_faq,
    write_faq,
)
from retrieval.index.indexer import Indexer

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


async def test_the_one_writer_keeps_what_staff_set_until_the_text_changes(
    session: AsyncSession, indexer: Indexer
) -> None:
    question = "Hạn nộp hồ sơ xét tuyển đợt 1 là khi nào?"
    imported = FaqDraft(question, "Hạn chót là ngày 30/6/2099.", external_id="t-han-nop")
    entry = await upsert_faq(session, indexer, replace(imported, variants=["han nop ho so"]))
    assert (entry.year, entry.valid_until) == (2099, date(2099, 6, 30))  # read from the text

    # The admin's form goes through the same writer: staff's dates win, phrasings stay.
    staff = FaqValidity(2098, date(2098, 12, 31))
    await write_faq(session, indexer, entry, replace(imported, validity=staff))
    assert (entry.year, entry.valid_until) == (2098, date(2098, 12, 31))
    phrasings = await session.scalars(select(FaqVariant.text).where(FaqVariant.faq_id == entry.id))
    assert list(phrasings) == ["han nop ho so"]

    again = await upsert_faq(session, indexer, imported)  # the same file imported again
    assert again.id == entry.id
    assert (again.year, again.valid_until) == (2098, date(2098, 12, 31))

    changed = replace(imported, answer="Hạn chót là ngày 15/7/2099.")
    await upsert_faq(session, indexer, changed)
    assert (again.year, again.valid_until) == (2099, date(2099, 7, 15))
