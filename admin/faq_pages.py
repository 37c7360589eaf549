"""The FAQ pages: the list with search and filters, the editor, phrasings, publishing, history.

Viewers see everything read-only; editors change it. What a change does to the store (the
re-embedding, the audit entry) is admin.faq_store's; this module maps HTTP to it.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn
from urllib.parse import urlencode

from aiohttp import web

from admin import audit
from admin.faq_store import (
    LANGUAGE_CHOICES,
    MAX_QUESTION,
    EntryForm,
    FaqFilters,
    add_variant,
    delete_entry,
    get_entry,
    known_sources,
    list_entries,
    remove_variant,
    save_entry,
    set_status,
)
from admin.i18n import add_strings
from admin.web import PAGE_SIZE, field, form, me, redirect, render, requires, runtime
from bot.core.citations import shown_name
from bot.db.models import FaqEntry, FaqOrigin, FaqStatus, StaffRole, VariantOrigin
from bot.knowledge.faq_check import check_entries
from retrieval.text.language import detect_language

add_strings(
    {
        "faq.title": ("Câu hỏi thường gặp", "Frequently asked questions"),
        "faq.intro": (
            "Mục đã xuất bản được trả lời nguyên văn khi câu hỏi của người học khớp.",
            "A published entry is given word for word when a student's question matches it.",
        ),
        "faq.new": ("Thêm câu hỏi", "New entry"),
        "faq.edit_title": ("Sửa câu hỏi #{id}", "Edit entry #{id}"),
        "faq.view_title": ("Câu hỏi #{id}", "Entry #{id}"),
        "faq.search": ("Tìm (không cần dấu)", "Search (accents optional)"),
        "faq.question": ("Câu hỏi", "Question"),
        "faq.answer": ("Câu trả lời (gửi nguyên văn)", "Answer (sent word for word)"),
        "faq.source": ("Nguồn", "Source"),
        "faq.source_url": ("Liên kết nguồn", "Source link"),
        "faq.language": ("Ngôn ngữ", "Language"),
        "faq.status": ("Trạng thái", "Status"),
        "faq.origin": ("Xuất xứ", "Origin"),
        "faq.updated": ("Cập nhật", "Updated"),
        "faq.variants_count": ("Cách hỏi", "Phrasings"),
        "faq.needs_review": ("Cần xem lại", "Needs review"),
        "faq.needs_review_help": (
            "Bỏ chọn khi đã kiểm tra lại mục này.",
            "Untick once this entry has been checked again.",
        ),
        "faq.review_note": ("Ghi chú: {note}", "Note: {note}"),
        "faq.status.draft": ("bản nháp", "draft"),
        "faq.status.published": ("đã xuất bản", "published"),
        "faq.origin.staff": ("nhân viên", "staff"),
        "faq.origin.generated": ("tạo tự động", "generated"),
        "faq.lang.vi": ("Tiếng Việt", "Vietnamese"),
        "faq.lang.en": ("Tiếng Anh", "English"),
        "faq.empty": ("Không có mục nào khớp.", "No entry matches."),
        "faq.publish": ("Xuất bản", "Publish"),
        "faq.unpublish": ("Chuyển về nháp", "Back to draft"),
        "faq.history": ("Lịch sử", "History"),
        "faq.history_title": ("Lịch sử câu hỏi #{id}", "History of entry #{id}"),
        "faq.history_empty": ("Chưa có thay đổi nào được ghi.", "No change recorded yet."),
        "faq.back_to_list": ("Về danh sách", "Back to the list"),
        "faq.back_to_entry": ("Về câu hỏi", "Back to the entry"),
        "faq.variants": ("Các cách hỏi khác", "Other phrasings"),
        "faq.variants_help": (
            "Người học hỏi theo nhiều cách; mỗi cách hỏi ở đây cũng dẫn tới câu trả lời này.",
            "Students ask in many ways; each phrasing here also leads to this answer.",
        ),
        "faq.variant_text": ("Cách hỏi mới", "New phrasing"),
        "faq.variant_add": ("Thêm", "Add"),
        "faq.variant_remove": ("Xoá", "Remove"),
        "faq.variant_exists": (
            "Cách hỏi này đã có (hoặc trống).",
            "This phrasing is already there (or empty).",
        ),
        "faq.variant.staff": ("nhân viên", "staff"),
        "faq.variant.generated": ("tạo tự động", "generated"),
        "faq.variant.folded": ("không dấu (tự động)", "without accents (automatic)"),
        "faq.check": ("Tự kiểm tra", "Self-check"),
        "faq.check_help": (
            "Mỗi cách hỏi của mục này được hỏi lại như sinh viên gõ (không nguyên văn). "
            "Hãy sửa các điểm dưới đây trước khi sinh viên gặp phải.",
            "Each phrasing of this entry is asked again the way a student types it (not word "
            "for word). Fix what is listed here before students meet it.",
        ),
        "faq.check_ok": (
            "Mọi cách hỏi ({n}) đều dẫn tới câu trả lời này.",
            "Every phrasing ({n}) leads to this answer.",
        ),
        "faq.check.unanswered": (
            "Nếu gõ khác đi một chút, cách hỏi này không còn dẫn tới mục này ({reason}). "
            "Hãy thêm vài cách hỏi gần với cách sinh viên hay viết.",
            "Typed a little differently, this phrasing no longer leads to this entry "
            "({reason}). Add a few phrasings close to how students write.",
        ),
        "faq.check.other_entry": (
            "Cách hỏi này được trả lời bằng mục #{id} («{question}»): hai mục dễ nhầm với nhau.",
            "This phrasing is answered by entry #{id} (“{question}”): the two are easily confused.",
        ),
        "faq.check.confusable": (
            "Mục #{id} («{question}») cũng nhận cách hỏi này: hai mục dễ nhầm với nhau, hãy "
            "làm rõ câu hỏi của một trong hai.",
            "Entry #{id} (“{question}”) takes this phrasing too: the two are easily confused; "
            "make one of the questions clearer.",
        ),
        "faq.check.guard": (
            "Bộ kiểm tra chặn cách hỏi này: {reason}.",
            "The near-miss guard refuses this phrasing: {reason}.",
        ),
        "faq.source_text": ("Đoạn tài liệu gốc", "Source passage"),
        "faq.action.create": ("tạo", "created"),
        "faq.action.update": ("sửa", "edited"),
        "faq.action.delete": ("xoá", "deleted"),
        "faq.action.publish": ("xuất bản", "published"),
        "faq.action.unpublish": ("chuyển về nháp", "unpublished"),
        "faq.action.approve": ("duyệt", "approved"),
        "faq.action.reject": ("loại bỏ", "rejected"),
        "faq.action.import": ("nhập từ tệp", "imported"),
        "faq.action.add_variant": ("thêm cách hỏi", "added a phrasing"),
        "faq.action.remove_variant": ("xoá cách hỏi", "removed a phrasing"),
        "faq.field.question": ("Câu hỏi", "Question"),
        "faq.field.answer": ("Câu trả lời", "Answer"),
        "faq.field.source": ("Nguồn", "Source"),
        "faq.field.source_url": ("Liên kết nguồn", "Source link"),
        "faq.field.language": ("Ngôn ngữ", "Language"),
        "faq.field.status": ("Trạng thái", "Status"),
        "faq.field.needs_review": ("Cần xem lại", "Needs review"),
        "faq.field.variant": ("Cách hỏi", "Phrasing"),
        "faq.field.origin": ("Xuất xứ", "Origin"),
        "faq.field.external_id": ("Mã", "Id"),
        "faq.before": ("Trước", "Before"),
        "faq.after": ("Sau", "After"),
        "faq.change": ("Thay đổi", "Change"),
        "faq.error.question_required": ("Cần có câu hỏi.", "A question is needed."),
        "faq.error.answer_required": ("Cần có câu trả lời.", "An answer is needed."),
        "faq.error.too_long": ("Quá dài.", "Too long."),
        "faq.error.url": (
            "Liên kết phải bắt đầu bằng http:// hoặc https://.",
            "A link starts with http:// or https://.",
        ),
        "faq.error.choice": ("Giá trị không hợp lệ.", "Not a valid choice."),
        "faq.error.year": ("Năm từ 2000 đến 2100.", "A year from 2000 to 2100."),
        "faq.error.date": ("Ngày không hợp lệ.", "Not a valid date."),
        "faq.year": ("Năm áp dụng", "Year it speaks of"),
        "faq.valid_until": ("Hiệu lực đến", "Valid until"),
        "faq.validity_help": (
            "Sau ngày này, trợ lý không trả lời nguyên văn mục này nữa và mục hiện trong “Cần "
            "cập nhật”. Để trống, trợ lý tự đọc từ câu trả lời khi bạn sửa nội dung.",
            "After this day the assistant no longer answers this entry word for word, and it "
            "shows in “To update”. Left empty, it is read from the answer when you change the "
            "text.",
        ),
        "faq.field.year": ("Năm áp dụng", "Year"),
        "faq.field.valid_until": ("Hiệu lực đến", "Valid until"),
        "faq.import_export": ("Nhập / xuất tệp", "Import / export"),
    }
)


def _faq_id(request: web.Request) -> int:
    return int(request.match_info["faq_id"])


async def _entry_or_404(session: Any, request: web.Request) -> FaqEntry:
    entry = await get_entry(session, _faq_id(request))
    if entry is None:
        raise web.HTTPNotFound()
    return entry


async def faq_list(request: web.Request) -> web.Response:
    filters = FaqFilters.from_query(request.query)
    async with runtime(request).sessionmaker() as session:
        entries, total = await list_entries(session, filters, PAGE_SIZE)
        sources = await known_sources(session)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    return await render(
        request,
        "faq_list.html",
        {
            "entries": entries,
            "total": total,
            "pages": pages,
            "filters": filters,
            "sources": sources,
            "statuses": list(FaqStatus),
            "origins": list(FaqOrigin),
            "languages_faq": LANGUAGE_CHOICES,
            "page_query": lambda page: urlencode(filters.query(page=page)),
            "can_edit": me(request).may(StaffRole.editor),
            "source_name": shown_name,  # an entry drafted from an untitled file: its name
        },
    )


async def _editor(
    request: web.Request,
    entry: FaqEntry | None,
    entry_form: EntryForm,
    *,
    variant_error: str = "",
    status: int = 200,
) -> web.Response:
    variants = list(entry.variants) if entry is not None else []
    check = None
    if entry is not None and entry.status == FaqStatus.published:
        rt = runtime(request)
        async with rt.sessionmaker() as session:
            check = await check_entries(rt.answerer, session, [entry.id])
    return await render(
        request,
        "faq_edit.html",
        {
            "entry": entry,
            "form": entry_form,
            "staff_variants": [v for v in variants if v.origin != VariantOrigin.folded],
            "check": check,
            "variant_error": variant_error,
            "statuses": list(FaqStatus),
            "languages_faq": LANGUAGE_CHOICES,
            "can_edit": me(request).may(StaffRole.editor),
        },
        status=status,
    )


@requires(StaffRole.editor)
async def faq_new(request: web.Request) -> web.Response:
    """The empty editor; ``?question=`` pre-fills it (e.g. from an unanswered question)."""
    question = " ".join(request.query.get("question", "").split())[:MAX_QUESTION]
    language = detect_language(question) if question else "vi"
    return await _editor(request, None, EntryForm(question=question, language=language))


@requires(StaffRole.editor)
async def faq_create(request: web.Request) -> web.Response:
    entry_form = EntryForm.read(await form(request))
    if entry_form.errors:
        return await _editor(request, None, entry_form, status=400)
    rt = runtime(request)
    async with rt.sessionmaker.begin() as session:
        entry = await save_entry(session, rt.indexer, None, entry_form, me(request).email)
    redirect(request, "admin.faq_edit", {"msg": "created"}, faq_id=entry.id)


async def faq_edit(request: web.Request) -> web.Response:
    async with runtime(request).sessionmaker() as session:
        entry = await _entry_or_404(session, request)
    return await _editor(request, entry, EntryForm.of(entry))


@requires(StaffRole.editor)
async def faq_save(request: web.Request) -> web.Response:
    entry_form = EntryForm.read(await form(request))
    rt = runtime(request)
    async with rt.sessionmaker.begin() as session:
        entry = await _entry_or_404(session, request)
        if entry_form.errors:
            return await _editor(request, entry, entry_form, status=400)
        await save_entry(session, rt.indexer, entry, entry_form, me(request).email)
    redirect(request, "admin.faq_edit", {"msg": "saved"}, faq_id=entry.id)


async def _set_status(request: web.Request, status: FaqStatus, action: str, msg: str) -> NoReturn:
    async with runtime(request).sessionmaker.begin() as session:
        entry = await _entry_or_404(session, request)
        await set_status(session, entry, status, me(request).email, action)
    redirect(request, "admin.faq_edit", {"msg": msg}, faq_id=entry.id)


@requires(StaffRole.editor)
async def faq_publish(request: web.Request) -> web.Response:
    await _set_status(request, FaqStatus.published, "publish", "published")


@requires(StaffRole.editor)
async def faq_unpublish(request: web.Request) -> web.Response:
    await _set_status(request, FaqStatus.draft, "unpublish", "unpublished")


@requires(StaffRole.editor)
async def faq_delete(request: web.Request) -> web.Response:
    async with runtime(request).sessionmaker.begin() as session:
        entry = await _entry_or_404(session, request)
        await delete_entry(session, entry, me(request).email, "delete")
    redirect(request, "admin.faq", {"msg": "deleted"})


@requires(StaffRole.editor)
async def faq_variant_add(request: web.Request) -> web.Response:
    text = field(await form(request), "variant", MAX_QUESTION)
    rt = runtime(request)
    async with rt.sessionmaker.begin() as session:
        entry = await _entry_or_404(session, request)
        added = await add_variant(session, rt.indexer, entry, text, me(request).email)
        if not added:
            return await _editor(
                request,
                entry,
                EntryForm.of(entry),
                variant_error="faq.variant_exists",
                status=400,
            )
    redirect(request, "admin.faq_edit", {"msg": "variant_added"}, faq_id=entry.id)


@requires(StaffRole.editor)
async def faq_variant_delete(request: web.Request) -> web.Response:
    rt = runtime(request)
    async with rt.sessionmaker.begin() as session:
        entry = await _entry_or_404(session, request)
        variant_id = int(request.match_info["variant_id"])
        if not await remove_variant(session, rt.indexer, entry, variant_id, me(request).email):
            raise web.HTTPNotFound()
    redirect(request, "admin.faq_edit", {"msg": "variant_removed"}, faq_id=entry.id)


async def faq_history(request: web.Request) -> web.Response:
    faq_id = _faq_id(request)
    async with runtime(request).sessionmaker() as session:
        entry = await get_entry(session, faq_id)
        items = await audit.history(session, "faq", faq_id)
    if entry is None and not items:
        raise web.HTTPNotFound()
    return await render(
        request,
        "faq_history.html",
        {"faq_id": faq_id, "entry": entry, "items": items, "word_diff": audit.word_diff},
    )


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/faq", faq_list, name="admin.faq")
    r.add_get("/faq/new", faq_new, name="admin.faq_new")
    r.add_post("/faq/new", faq_create, name="admin.faq_create")
    r.add_get(r"/faq/{faq_id:\d+}", faq_edit, name="admin.faq_edit")
    r.add_post(r"/faq/{faq_id:\d+}", faq_save, name="admin.faq_save")
    r.add_post(r"/faq/{faq_id:\d+}/publish", faq_publish, name="admin.faq_publish")
    r.add_post(r"/faq/{faq_id:\d+}/unpublish", faq_unpublish, name="admin.faq_unpublish")
    r.add_post(r"/faq/{faq_id:\d+}/delete", faq_delete, name="admin.faq_delete")
    r.add_post(r"/faq/{faq_id:\d+}/variants", faq_variant_add, name="admin.faq_variant_add")
    r.add_post(
        r"/faq/{faq_id:\d+}/variants/{variant_id:\d+}/delete",
        faq_variant_delete,
        name="admin.faq_variant_delete",
    )
    r.add_get(r"/faq/{faq_id:\d+}/history", faq_history, name="admin.faq_history")
