"""What goes stale (bot.knowledge.staleness) and tier 1's silence about an expired entry, in a
real PostgreSQL inside the test's transaction."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer.answerer import Answerer
from bot.db.models import Document, FaqEntry
from bot.knowledge.staleness import (
    DATES_PAST,
    EXPIRED,
    EXPIRING,
    OLDER_FIGURES,
    OLDER_YEAR,
    current_admission_year,
    stale_items,
)
from retrieval.index.documents import index_document, read_document_validity
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer
from retrieval.loading import load_file

TODAY = date(2026, 6, 1)


def _table(year: int, value: str) -> str:
    return (
        f"# Điểm chuẩn năm {year}\n\n| Ngành | Mã ngành | Điểm chuẩn |\n|---|---|---|\n"
        f"| Khoa học Máy tính | 7480101 | {value} |\n"
    )


async def test_entries_and_documents_going_stale_are_listed_with_why(
    session: AsyncSession, indexer: Indexer, tmp_path: Path
) -> None:
    async def entry(question: str, answer: str, until: date | None = None) -> FaqEntry:
        stored = await upsert_faq(session, indexer, FaqDraft(question, answer))
        if until is not None:
            stored.valid_until = until
        await session.flush()
        return stored

    expired = await entry("Hạn nộp hồ sơ đợt 1?", "Đến 20/5/2026.", TODAY - timedelta(days=1))
    expiring = await entry("Hạn nộp hồ sơ đợt 2?", "Đến 20/6/2026.", TODAY + timedelta(days=19))
    later = await entry("Hạn nộp hồ sơ đợt 3?", "Đến 20/9/2026.", TODAY + timedelta(days=111))
    past = await entry("Lịch thi năm ngoái?", "Thi ngày 3/3/2025.")
    older = await entry("Chỉ tiêu năm 2025 ngành KHMT?", "240 sinh viên (năm 2025).")
    ids = []
    for year, value in ((2024, "27,30"), (2025, "27,50")):
        path = tmp_path / f"diem-chuan-{year}.md"
        path.write_text(_table(year, value), encoding="utf-8")
        ids.append((await index_document(session, indexer, load_file(path))).document_id)
    notice = tmp_path / "thong-bao.md"
    notice.write_text(
        "# Thông báo tuyển sinh\n\nNhận hồ sơ từ 1/3/2026 đến hết ngày 20/5/2026.\n",
        encoding="utf-8",
    )
    # read as the day it was published: its last date was still ahead then
    doc = load_file(notice)
    ids.append((await index_document(session, indexer, doc)).document_id)
    stored = await session.get(Document, ids[-1])
    assert stored is not None
    read_document_validity(stored, doc, today=date(2026, 3, 1))
    assert (stored.year, stored.valid_until) == (2026, date(2026, 5, 20))
    await session.flush()
    assert await current_admission_year(session, 2026, TODAY) == 2026  # the setting wins

    found = {(i.kind, i.id): i for i in await stale_items(session, 2026, TODAY)}
    assert (found[("faq", expired.id)].reason, found[("faq", expired.id)].detail) == (
        EXPIRED,
        "31/05/2026",
    )
    assert found[("faq", expiring.id)].reason == EXPIRING
    assert ("faq", later.id) not in found
    assert (found[("faq", past.id)].reason, found[("faq", past.id)].detail) == (
        DATES_PAST,
        "03/03/2025",
    )
    assert (found[("faq", older.id)].reason, found[("faq", older.id)].detail) == (
        OLDER_YEAR,
        "2025 < 2026",
    )
    # each of this test's documents once, for the first reason that holds
    assert [
        (i.title, i.reason, i.detail)
        for i in await stale_items(session, 2026, TODAY)
        if i.kind == "document" and i.id in ids
    ] == [
        ("Thông báo tuyển sinh", EXPIRED, "20/05/2026"),
        ("Điểm chuẩn năm 2024", OLDER_FIGURES, "điểm chuẩn 2024 < 2025"),
        ("Điểm chuẩn năm 2025", OLDER_YEAR, "2025 < 2026"),
    ]


async def test_an_expired_entry_is_not_answered_verbatim(
    answerer: Answerer, session: AsyncSession
) -> None:
    question = "Chỉ tiêu ngành Khoa học Máy tính năm 2026 là bao nhiêu?"
    assert (await answerer.answer(question)).faq_external_id == "shut-faq02"
    entry = await session.scalar(select(FaqEntry).where(FaqEntry.external_id == "shut-faq02"))
    assert entry is not None
    entry.valid_until = date.today() - timedelta(days=1)
    await session.flush()
    result = await answerer.answer(question)
    assert result.tier != "faq"
    assert result.faq_external_id is None
    entry.valid_until = date.today()  # valid through its last day
    await session.flush()
    assert (await answerer.answer(question)).faq_external_id == "shut-faq02"
