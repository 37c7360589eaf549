"""The review queue over real HTTP: generated drafts beside their source passage; approve (with
an edit) publishes and answers at once, reject deletes, bulk actions, audit, escaping."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import AuditEntry, Document, FaqEntry, FaqOrigin, FaqStatus
from retrieval.index.faq_entries import FaqDraft, upsert_faq
from retrieval.index.indexer import Indexer
from tests.admin._support import AdminBrowser

SOURCE = (
    "Điều 7. Mượn tài liệu. Sinh viên được mượn tối đa 5 cuốn sách trong 14 ngày; quá hạn "
    "phạt 2.000 đồng mỗi cuốn mỗi ngày."
)


async def generated(
    sm: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    question: str,
    answer: str,
    source_text: str = SOURCE,
) -> int:
    async with sm.begin() as session:
        entry = await upsert_faq(
            session, indexer, FaqDraft(question=question, answer=answer, status=FaqStatus.draft)
        )
        document = await session.scalar(select(Document).limit(1))
        assert document is not None
        entry.origin = FaqOrigin.generated
        entry.source_document_id = document.id
        entry.source_text = source_text
        entry.source_version = document.content_hash
        await session.flush()
        return entry.id


async def status_of(sm: async_sessionmaker[AsyncSession], faq_id: int) -> FaqStatus | None:
    async with sm() as session:
        entry = await session.get(FaqEntry, faq_id)
        return entry.status if entry is not None else None


Q1 = "Sinh viên được mượn tối đa bao nhiêu cuốn sách ở thư viện?"
A1 = "Tối đa 5 cuốn trong 14 ngày; quá hạn phạt 2.000 đồng mỗi cuốn mỗi ngày."


async def test_a_card_shows_the_source_beside_the_proposal(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> None:
    entry = await generated(sessionmaker, indexer, Q1, A1)
    page = await viewer.page("/admin/review")
    assert f'data-testid="review-card-{entry}"' in page
    card = page.split(f'data-testid="review-card-{entry}"')[1].split("</article>")[0]
    assert "Điều 7. Mượn tài liệu." in card
    assert Q1 in card
    assert A1 in card
    assert "Tài liệu: " in card
    assert f'data-testid="review-approve-{entry}"' not in card  # a viewer only reads


async def test_approve_with_an_edit_publishes_and_answers_verbatim(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> None:
    entry = await generated(sessionmaker, indexer, Q1, A1)
    assert (await editor.ask(Q1)).get("faq_id") != entry  # a draft does not answer
    edited = A1 + " Gia hạn trực tuyến được một lần."
    response = await editor.post(
        f"/admin/review/{entry}/approve", {"question": Q1, "answer": edited}
    )
    assert response.status == 303
    assert response.headers["Location"] == "/admin/review?msg=approved"
    answered = await editor.ask(Q1)
    assert (answered["tier"], answered["faq_id"], answered["said"]) == ("faq", entry, edited)
    assert f'data-testid="review-card-{entry}"' not in await editor.page("/admin/review")
    async with sessionmaker() as session:
        actions = (
            await session.scalars(
                select(AuditEntry.action)
                .where(AuditEntry.entity == "faq", AuditEntry.entity_id == entry)
                .order_by(AuditEntry.id)
            )
        ).all()
    assert actions == ["update", "approve"]
    # out of the queue: approving or rejecting it again is a 404
    assert (await editor.post(f"/admin/review/{entry}/reject")).status == 404


async def test_reject_deletes_and_records_who(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> None:
    entry = await generated(sessionmaker, indexer, Q1, A1)
    assert (await editor.post(f"/admin/review/{entry}/reject")).status == 303
    assert await status_of(sessionmaker, entry) is None
    async with sessionmaker() as session:
        record = await session.scalar(
            select(AuditEntry).where(AuditEntry.entity_id == entry, AuditEntry.action == "reject")
        )
    assert record is not None
    assert record.actor.startswith("editor")
    assert record.before is not None
    assert record.before["question"] == Q1


async def test_bulk_actions_apply_to_the_ticked_cards_only(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> None:
    ids = [
        await generated(sessionmaker, indexer, f"Câu hỏi tạo tự động số {n}?", f"Trả lời {n}.")
        for n in range(4)
    ]
    approve = await editor.post(
        "/admin/review/bulk", [("action", "approve"), ("ids", str(ids[0])), ("ids", str(ids[1]))]
    )
    assert approve.headers["Location"] == "/admin/review?msg=bulk_done"
    reject = await editor.post("/admin/review/bulk", [("action", "reject"), ("ids", str(ids[2]))])
    assert reject.status == 303
    assert [await status_of(sessionmaker, i) for i in ids] == [
        FaqStatus.published,
        FaqStatus.published,
        None,
        FaqStatus.draft,
    ]
    nothing = await editor.post("/admin/review/bulk", [("action", "approve")])
    assert nothing.headers["Location"] == "/admin/review?msg=nothing_selected"
    bad = await editor.post("/admin/review/bulk", [("action", "drop"), ("ids", str(ids[3]))])
    assert bad.status == 400


async def test_a_changed_source_puts_a_published_entry_back_in_the_queue(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> None:
    entry = await generated(sessionmaker, indexer, Q1, A1)
    await editor.post(f"/admin/review/{entry}/approve", {"question": Q1, "answer": A1})
    async with sessionmaker.begin() as session:
        row = await session.get(FaqEntry, entry)
        assert row is not None
        row.needs_review = True
        row.review_note = "source changed on re-ingest (quy-che.pdf)"
    page = await editor.page("/admin/review")
    assert f'data-testid="review-card-{entry}"' in page
    assert "source changed on re-ingest (quy-che.pdf)" in page
    await editor.post("/admin/review/bulk", [("action", "approve"), ("ids", str(entry))])
    async with sessionmaker() as session:
        row = await session.get(FaqEntry, entry)
        assert row is not None
        assert (row.needs_review, row.review_note, row.status) == (False, None, FaqStatus.published)


async def test_generated_text_is_escaped_in_the_queue(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer
) -> None:
    script = "<script>alert(1)</script>"
    await generated(sessionmaker, indexer, f"Hỏi {script}?", f"Đáp {script}", f"Nguồn {script}")
    page = await editor.page("/admin/review")
    assert "<script>alert" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3
