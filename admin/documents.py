"""The Documents page: the indexed sources with their state, upload, re-ingest and delete.

The list is the query of ``tuvan sources``. Editors upload files (PDF, Markdown, HTML,
DOCX, text, CSV) up to ``MAX_UPLOAD_BYTES``; ingestion runs in a task of its own, awaited for
``INLINE_WAIT_S`` — a file done by then gets its result at once, a longer one (a big scanned PDF
being OCR'd) goes on in the background and shows up in the list and in the recent activity when
done. Web pages are re-fetched with `tuvan ingest URL` or `tuvan crawl`, not from here.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from sqlalchemy import select

from admin import audit
from admin.document_files import (
    IngestOutcome,
    ingest_file,
    is_upload,
    safe_name,
    stage,
    uploads_dir,
)
from admin.i18n import add_strings
from admin.keys import INGESTS
from admin.source_names import without_paths
from admin.web import Handler, field, form, int_param, me, redirect, render, requires, runtime
from bot.core.citations import citation_label, public_url
from bot.db.models import AuditEntry, Chunk, Document, StaffRole
from bot.knowledge.sources import SourceRow, list_sources
from retrieval.facts.years import document_validity
from retrieval.index.documents import delete_document
from retrieval.loading import SUPPORTED_SUFFIXES

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
INLINE_WAIT_S = 20.0
DOCUMENTS_PAGE = 50
RECENT = 10

add_strings(
    {
        "docs.title": ("Tài liệu", "Documents"),
        "docs.intro": (
            "Các nguồn trợ lý trích dẫn khi trả lời (tầng 2). Tải lên tệp mới, nạp lại một "
            "tệp đã sửa, hoặc xoá một nguồn cùng các mục FAQ được tạo từ nó.",
            "The sources the assistant quotes from (tier 2). Upload a new file, re-ingest a "
            "changed one, or delete a source with the FAQ entries generated from it.",
        ),
        "docs.search": ("Tìm theo tên hoặc địa chỉ", "Search by title or address"),
        "docs.source": ("Tài liệu", "Document"),
        "docs.state": ("Trạng thái", "State"),
        "docs.state.indexed": ("đã lập chỉ mục", "indexed"),
        "docs.state.stale": ("cần lập lại chỉ mục", "needs reindex"),
        "docs.state.empty": ("không có đoạn nào", "no chunks"),
        "docs.chunks": ("Đoạn", "Chunks"),
        "docs.pages": ("Trang", "Pages"),
        "docs.faq": ("FAQ tạo từ tài liệu", "Generated FAQ"),
        "docs.faq_counts": (
            "{drafts} nháp · {published} đã xuất bản · {flagged} cần xem lại",
            "{drafts} drafts · {published} published · {flagged} to review",
        ),
        "docs.updated": ("Cập nhật", "Updated"),
        "docs.empty": ("Chưa có tài liệu nào.", "No document yet."),
        "docs.reingest": ("Nạp lại", "Re-ingest"),
        "docs.confirm_delete": (
            "Xoá tài liệu này, các đoạn của nó và mọi mục FAQ được tạo từ nó (kể cả đã xuất "
            "bản)? Không thể hoàn tác.",
            "Delete this document, its chunks and every FAQ entry generated from it (published "
            "ones too)? This cannot be undone.",
        ),
        "docs.upload": ("Tải lên tài liệu", "Upload a document"),
        "docs.file": ("Tệp", "File"),
        "docs.upload_help": (
            "PDF, Markdown, HTML, DOCX, TXT, CSV hoặc XLSX, tối đa {mb} MB. Tải lên tệp trùng tên "
            "sẽ thay thế tài liệu cũ.",
            "PDF, Markdown, HTML, DOCX, TXT, CSV or XLSX, up to {mb} MB. A file with the name of "
            "one already uploaded replaces it.",
        ),
        "docs.upload_submit": ("Tải lên và lập chỉ mục", "Upload and index"),
        "docs.recent": ("Hoạt động gần đây", "Recent activity"),
        "docs.result": ("Kết quả", "Result"),
        "docs.n_chunks": ("{n} đoạn", "{n} chunks"),
        "docs.action.upload": ("tải lên", "uploaded"),
        "docs.action.upload_failed": ("tải lên thất bại", "upload failed"),
        "docs.action.reingest": ("nạp lại", "re-ingested"),
        "docs.action.reingest_failed": ("nạp lại thất bại", "re-ingest failed"),
        "docs.action.delete": ("xoá", "deleted"),
        "docs.error.no_file": ("Chưa chọn tệp.", "No file was chosen."),
        "docs.error.type": (
            "Loại tệp này không được hỗ trợ (PDF, Markdown, HTML, DOCX, TXT, CSV, XLSX).",
            "This type of file is not supported (PDF, Markdown, HTML, DOCX, TXT, CSV, XLSX).",
        ),
        "docs.error.failed": (
            "Không đọc được tệp, không có gì bị thay đổi: {reason}",
            "The file could not be read; nothing was changed: {reason}",
        ),
        "docs.error.missing": (
            "Không còn tệp tại đường dẫn này; hãy tải lên lại.",
            "The file is no longer at this path; upload it again.",
        ),
        "docs.error.url": (
            "Trang web được tải lại bằng lệnh `tuvan ingest URL` hoặc `tuvan crawl`.",
            "Web pages are fetched again with `tuvan ingest URL` or `tuvan crawl`.",
        ),
        "docs.validity": ("Năm · hiệu lực đến", "Year · valid until"),
        "docs.validity_by_staff": ("do cán bộ đặt", "set by staff"),
        "docs.validity_save": ("Lưu", "Save"),
        "docs.validity_reread": ("Đọc lại từ văn bản", "Read from the text again"),
        "docs.action.validity": ("đặt năm / hiệu lực", "set year / validity"),
        "docs.error.validity": (
            "Năm phải là một năm từ 2000 đến 2100, ngày hiệu lực theo dạng năm-tháng-ngày.",
            "The year must be a year from 2000 to 2100, the date written year-month-day.",
        ),
        "msg.doc_validity": (
            "Đã lưu năm và hiệu lực của tài liệu.",
            "The document's year and validity are saved.",
        ),
        "msg.doc_indexed": ("Đã lập chỉ mục tài liệu.", "The document is indexed."),
        "msg.doc_unchanged": (
            "Tài liệu không thay đổi: không có gì phải làm.",
            "The document has not changed: nothing to do.",
        ),
        "msg.doc_background": (
            "Đang lập chỉ mục ở chế độ nền; tài liệu sẽ hiện trong danh sách khi xong.",
            "Indexing in the background; the document shows in the list when done.",
        ),
        "msg.doc_deleted": (
            "Đã xoá tài liệu và những gì được tạo từ nó.",
            "The document and what came from it are deleted.",
        ),
    }
)


@web.middleware
async def upload_body_limit(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Let the upload route read bodies up to ``MAX_UPLOAD_BYTES``.

    The server's limit (``TUVAN_MAX_BODY_BYTES``, 1 MiB, meant for webhooks) is per request and
    is applied by whoever first reads the form — the admin's CSRF check — so it is raised here,
    before that, for this one route (only signed-in editors get past the guard to it)."""
    if request.match_info.route.name == "admin.documents_upload":
        request = request.clone(client_max_size=MAX_UPLOAD_BYTES)
    return await handler(request)


def _matches(row: SourceRow, q: str) -> bool:
    return q in row.title.casefold() or q in row.source.casefold()


async def _page(
    request: web.Request, *, error: str = "", reason: str = "", status: int = 200
) -> web.Response:
    q = " ".join(request.query.get("q", "").split())[:200]
    page = int_param(request.query.get("page"), 1, high=100_000)
    async with runtime(request).sessionmaker() as session:
        rows = await list_sources(session)
        recent = (
            await session.scalars(
                select(AuditEntry)
                .where(AuditEntry.entity == "document")
                .order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
                .limit(RECENT)
            )
        ).all()
    if q:
        rows = [r for r in rows if _matches(r, q.casefold())]
    pages = max(1, math.ceil(len(rows) / DOCUMENTS_PAGE))
    page = min(page, pages)
    shown = rows[(page - 1) * DOCUMENTS_PAGE : page * DOCUMENTS_PAGE]
    return await render(
        request,
        "documents.html",
        {
            "rows": shown,
            "total": len(rows),
            "page": page,
            "pages": pages,
            "q": q,
            "recent": recent,
            "error": error,
            "reason": reason,
            "accept": ",".join(sorted(SUPPORTED_SUFFIXES)),
            "max_mb": MAX_UPLOAD_BYTES // (1024 * 1024),
            "can_edit": me(request).may(StaffRole.editor),
            # What a source is called and where it is on the web; never its server path.
            "source_name": lambda title, source="": citation_label(title or "", source or ""),
            "web_url": public_url,
            "plain": without_paths,
            "page_query": lambda n: urlencode({k: v for k, v in (("q", q), ("page", n)) if v}),
        },
        status=status,
    )


async def documents_page(request: web.Request) -> web.Response:
    return await _page(request)


async def _run(request: web.Request, outcome: asyncio.Task[IngestOutcome]) -> web.Response:
    """Wait a while for an ingestion; past that it finishes in the background."""
    tasks = request.app[INGESTS]
    tasks.add(outcome)
    outcome.add_done_callback(tasks.discard)
    done, _ = await asyncio.wait({outcome}, timeout=INLINE_WAIT_S)
    if not done:
        redirect(request, "admin.documents", {"msg": "doc_background"})
    result = outcome.result()
    if result.status == "failed":
        reason = without_paths(result.error or "")
        return await _page(request, error="docs.error.failed", reason=reason, status=422)
    redirect(request, "admin.documents", {"msg": f"doc_{result.status}"})


@requires(StaffRole.editor)
async def upload(request: web.Request) -> web.Response:
    data = await form(request)
    try:
        return await _upload(request, data.get("file"))
    finally:  # aiohttp spools each file part to a temporary file it leaves to us to close
        for value in data.values():
            if isinstance(value, web.FileField):
                value.file.close()


async def _upload(request: web.Request, sent: object) -> web.Response:
    if not isinstance(sent, web.FileField) or not sent.filename:
        return await _page(request, error="docs.error.no_file", status=400)
    name = safe_name(sent.filename)
    if name is None:
        return await _page(request, error="docs.error.type", status=400)
    rt = runtime(request)
    staged = await asyncio.to_thread(stage, rt, name, sent.file)
    target = uploads_dir(rt) / name
    task = asyncio.create_task(ingest_file(rt, target, me(request).email, "upload", staged=staged))
    return await _run(request, task)


async def _document(request: web.Request) -> Document:
    async with runtime(request).sessionmaker() as session:
        found = await session.get(Document, int(request.match_info["document_id"]))
    if found is None:
        raise web.HTTPNotFound()
    return found


@requires(StaffRole.editor)
async def reingest(request: web.Request) -> web.Response:
    document = await _document(request)
    if document.source.startswith(("http://", "https://")):
        return await _page(request, error="docs.error.url", status=400)
    path = Path(document.source)
    if not await asyncio.to_thread(path.is_file):
        return await _page(request, error="docs.error.missing", status=400)
    task = asyncio.create_task(ingest_file(runtime(request), path, me(request).email, "reingest"))
    return await _run(request, task)


@requires(StaffRole.editor)
async def delete(request: web.Request) -> web.Response:
    await form(request)  # the CSRF token was in it; nothing else is
    document = await _document(request)
    rt = runtime(request)
    before: dict[str, Any] = {"source": document.source, "title": document.title}
    async with rt.sessionmaker.begin() as session:
        if not await delete_document(session, document.source):
            raise web.HTTPNotFound()
        await audit.record(session, me(request).email, "delete", "document", document.id, before)
    if is_upload(rt, document.source):
        await asyncio.to_thread(Path(document.source).unlink, True)
    redirect(request, "admin.documents", {"msg": "doc_deleted"})


@requires(StaffRole.editor)
async def validity(request: web.Request) -> web.Response:
    """Staff set the year a document speaks of and until when it holds (kept over re-ingests),
    or hand them back to what its text says (``reread``)."""
    data = await form(request)
    document = await _document(request)
    reread = field(data, "reread") == "1"
    year_text, until_text = field(data, "year", 10), field(data, "valid_until", 10)
    try:
        year = int(year_text) if year_text else None
        until = date.fromisoformat(until_text) if until_text else None
    except ValueError:
        year, until = 0, None
    if year is not None and not 2000 <= year <= 2100 and not reread:
        return await _page(request, error="docs.error.validity", status=400)
    rt = runtime(request)
    async with rt.sessionmaker.begin() as session:
        stored = await session.get(Document, document.id, with_for_update=True)
        if stored is None:
            raise web.HTTPNotFound()
        before = _validity(stored)
        if reread:
            stored.validity_by_staff = False
            text = "\n".join(
                (
                    await session.scalars(
                        select(Chunk.text)
                        .where(Chunk.document_id == stored.id)
                        .order_by(Chunk.ordinal)
                    )
                ).all()
            )
            stored.year, stored.valid_until = document_validity(stored.title, text, date.today())
        else:
            stored.year, stored.valid_until, stored.validity_by_staff = year, until, True
        after = {**_validity(stored), "source": stored.source, "title": stored.title}
        await audit.record(
            session, me(request).email, "validity", "document", stored.id, before, after
        )
    redirect(request, "admin.documents", {"msg": "doc_validity"})


def _validity(document: Document) -> dict[str, Any]:
    until = document.valid_until.isoformat() if document.valid_until else None
    return {"year": document.year, "valid_until": until, "by_staff": document.validity_by_staff}


async def _ingests(app: web.Application) -> AsyncIterator[None]:
    """The uploads' ingestions run in tasks of their own (``INGESTS``); when the server stops,
    those under way get a moment and the rest stop (nothing half-stored: each stores in one
    transaction)."""
    yield
    tasks = app[INGESTS].copy()
    if tasks:
        await asyncio.wait(tasks, timeout=10)
    for task in tasks:
        task.cancel()


def setup(app: web.Application) -> None:
    app[INGESTS] = set()
    app.cleanup_ctx.append(_ingests)
    app.middlewares.insert(0, upload_body_limit)
    r = app.router
    r.add_get("/documents", documents_page, name="admin.documents")
    r.add_post("/documents/upload", upload, name="admin.documents_upload")
    r.add_post(r"/documents/{document_id:\d+}/reingest", reingest, name="admin.documents_reingest")
    r.add_post(r"/documents/{document_id:\d+}/delete", delete, name="admin.documents_delete")
    r.add_post(r"/documents/{document_id:\d+}/validity", validity, name="admin.documents_validity")
