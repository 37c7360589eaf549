"""The review queue: what tuvan generated or what changed under it, for staff to settle.

In the queue: entries generated from a document that are still drafts (URAG-F b, `tuvan faq
generate`) and any entry flagged ``needs_review`` (its source document changed on re-ingest).
Each card shows the source passage beside the proposed question and answer. Approve publishes
(after saving any edit made in the card, re-embedded at once); reject deletes the entry. Bulk
actions apply to the ticked cards. Every decision is audited (``approve`` / ``reject``).
"""

from __future__ import annotations

import math
from typing import Any

from aiohttp import web
from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admin.faq_store import EntryForm, delete_entry, save_entry, set_status
from admin.i18n import add_strings
from admin.web import field, form, int_param, me, redirect, render, requires, runtime
from bot.db.models import Document, FaqEntry, FaqOrigin, FaqStatus, FaqVariant, StaffRole
from retrieval.index.indexer import Indexer

REVIEW_PAGE_SIZE = 20
MAX_BULK = 200

add_strings(
    {
        "review.title": ("Duyệt câu hỏi tạo tự động", "Review generated entries"),
        "review.intro": (
            "Các câu hỏi được tạo từ tài liệu, hoặc có nguồn đã thay đổi. Duyệt để xuất bản "
            "(mục sẽ được trả lời nguyên văn), sửa trước khi duyệt, hoặc loại bỏ.",
            "Entries generated from documents, or whose source changed. Approve to publish "
            "(the entry is then given word for word), edit before approving, or reject.",
        ),
        "review.empty": ("Không còn mục nào cần duyệt.", "Nothing left to review."),
        "review.count": ("{n} mục cần duyệt", "{n} entries to review"),
        "review.source": ("Đoạn tài liệu gốc", "Source passage"),
        "review.no_source": (
            "(không còn đoạn gốc: mục này do nhân viên viết)",
            "(no source passage: a staff entry)",
        ),
        "review.document": ("Tài liệu: {title}", "Document: {title}"),
        "review.proposed": ("Đề xuất", "Proposed"),
        "review.approve": ("Duyệt và xuất bản", "Approve and publish"),
        "review.reject": ("Loại bỏ", "Reject"),
        "review.open": ("Mở trình sửa đầy đủ", "Open in the full editor"),
        "review.bulk_approve": ("Duyệt các mục đã chọn", "Approve selected"),
        "review.bulk_reject": ("Loại bỏ các mục đã chọn", "Reject selected"),
        "review.confirm_reject": (
            "Loại bỏ (xoá) các mục đã chọn?",
            "Reject (delete) the selected entries?",
        ),
        "review.flagged_variants": (
            "{n} cách hỏi tạo tự động cần xem lại",
            "{n} generated phrasings to check",
        ),
        "msg.bulk_done": ("Đã xử lý các mục đã chọn.", "The selected entries are done."),
    }
)


def _in_queue() -> Any:
    return or_(
        FaqEntry.needs_review.is_(True),
        and_(FaqEntry.origin == FaqOrigin.generated, FaqEntry.status == FaqStatus.draft),
    )


async def queue(
    session: AsyncSession, page: int, page_size: int
) -> tuple[list[tuple[FaqEntry, str | None]], int]:
    """A page of the queue (oldest first: first come, first settled) with document titles."""
    total = int(
        await session.scalar(select(func.count()).select_from(FaqEntry).where(_in_queue())) or 0
    )
    rows = await session.execute(
        select(FaqEntry, Document.title)
        .outerjoin(Document, Document.id == FaqEntry.source_document_id)
        .where(_in_queue())
        .options(selectinload(FaqEntry.variants))
        .order_by(FaqEntry.created_at, FaqEntry.id)
        .offset((page - 1) * page_size)
        .limit(page_size)
    )
    return [(entry, title) for entry, title in rows.all()], total


async def _queued(session: AsyncSession, faq_id: int) -> FaqEntry:
    entry = await session.scalar(
        select(FaqEntry)
        .where(FaqEntry.id == faq_id, _in_queue())
        .options(selectinload(FaqEntry.variants))
    )
    if entry is None:
        raise web.HTTPNotFound()
    return entry


async def approve(
    session: AsyncSession,
    indexer: Indexer,
    entry: FaqEntry,
    actor: str,
    edited: EntryForm | None = None,
) -> None:
    """Publish, after saving an edit; the entry's flagged generated phrasings are settled too."""
    if edited is not None:
        await save_entry(session, indexer, entry, edited, actor)
    await session.execute(
        update(FaqVariant).where(FaqVariant.faq_id == entry.id).values(needs_review=False)
    )
    await set_status(session, entry, FaqStatus.published, actor, "approve")


async def review_page(request: web.Request) -> web.Response:
    page = int_param(request.query.get("page"), 1)
    async with runtime(request).sessionmaker() as session:
        cards, total = await queue(session, page, REVIEW_PAGE_SIZE)
    return await render(
        request,
        "review.html",
        {
            "cards": cards,
            "total": total,
            "page": page,
            "pages": max(1, math.ceil(total / REVIEW_PAGE_SIZE)),
            "page_query": lambda p: f"page={p}",
            "can_edit": me(request).may(StaffRole.editor),
        },
    )


@requires(StaffRole.editor)
async def approve_one(request: web.Request) -> web.Response:
    """Approve one card, with the question and answer as the card's form holds them."""
    data = await form(request)
    rt = runtime(request)
    async with rt.sessionmaker.begin() as session:
        entry = await _queued(session, int(request.match_info["faq_id"]))
        edited = EntryForm.of(entry)
        edited.question = " ".join(field(data, "question").split()) or entry.question
        edited.answer = field(data, "answer") or entry.answer
        edited.needs_review = False
        edited.status = FaqStatus.published.value
        edited.check()
        if edited.errors:
            raise web.HTTPBadRequest()
        await approve(session, rt.indexer, entry, me(request).email, edited)
    redirect(request, "admin.review", {"msg": "approved"})


@requires(StaffRole.editor)
async def reject_one(request: web.Request) -> web.Response:
    async with runtime(request).sessionmaker.begin() as session:
        entry = await _queued(session, int(request.match_info["faq_id"]))
        await delete_entry(session, entry, me(request).email, "reject")
    redirect(request, "admin.review", {"msg": "rejected"})


@requires(StaffRole.editor)
async def bulk(request: web.Request) -> web.Response:
    data = await form(request)
    action = field(data, "action")
    if action not in ("approve", "reject"):
        raise web.HTTPBadRequest()
    ids = sorted({int(v) for v in data.getall("ids", []) if isinstance(v, str) and v.isdigit()})
    if not ids:
        redirect(request, "admin.review", {"msg": "nothing_selected"})
    rt = runtime(request)
    actor = me(request).email
    async with rt.sessionmaker.begin() as session:
        entries = (
            await session.scalars(
                select(FaqEntry)
                .where(FaqEntry.id.in_(ids[:MAX_BULK]), _in_queue())
                .options(selectinload(FaqEntry.variants))
            )
        ).all()
        for entry in entries:
            if action == "approve":
                await approve(session, rt.indexer, entry, actor)
            else:
                await delete_entry(session, entry, actor, "reject")
    redirect(request, "admin.review", {"msg": "bulk_done"})


def setup(app: web.Application) -> None:
    app.router.add_get("/review", review_page, name="admin.review")
    app.router.add_post("/review/bulk", bulk, name="admin.review_bulk")
    app.router.add_post(r"/review/{faq_id:\d+}/approve", approve_one, name="admin.review_approve")
    app.router.add_post(r"/review/{faq_id:\d+}/reject", reject_one, name="admin.review_reject")
