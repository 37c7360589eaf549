"""FAQ import and export from the page: JSONL, CSV and Excel workbooks (JSON, YAML read too) in
knowledge.faq_files' format, the same as ``tuvan faq import/export``.

An import is all or nothing: the whole file is parsed and checked before anything is written,
and the rows are written in one transaction, each re-embedded and audited (action ``import``).
Rows with an ``id`` update the entry with that external id; rows without one are added.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from admin import audit
from admin.faq_store import snapshot
from admin.i18n import add_strings
from admin.web import form, me, render, requires, runtime, translator
from bot.core.clock import utcnow
from bot.core.errors import FaqFileError
from bot.db.models import FaqEntry, FaqStatus, StaffRole
from bot.knowledge.faq_files import faq_file_bytes, parse_faq_bytes
from retrieval.index.faq_entries import upsert_faq

MAX_IMPORT_BYTES = 5 * 1024 * 1024
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
EXPORTS = {
    "jsonl": ("application/x-ndjson", ".jsonl"),
    "csv": ("text/csv", ".csv"),
    "xlsx": (XLSX_TYPE, ".xlsx"),
}

add_strings(
    {
        "files.export": ("Xuất tệp", "Export"),
        "files.export_help": (
            "Tải về mọi câu hỏi (kèm các cách hỏi của nhân viên), để lưu trữ hoặc sửa hàng loạt.",
            "Download every entry (with the staff phrasings), to keep or to edit in bulk.",
        ),
        "files.export_failed": ("Không xuất được tệp: {reason}", "Export failed: {reason}"),
        "files.import": ("Nhập tệp", "Import"),
        "files.import_help": (
            "Tệp Excel (.xlsx, trang tính đầu tiên, dòng đầu là tên cột), CSV hoặc JSONL với các "
            "cột id, question, answer, source, source_url, language, status, variants (phân "
            "cách bằng |). Dòng có id trùng sẽ cập nhật mục đã có. "
            "Nếu tệp có lỗi, không dòng nào được nhập.",
            "An Excel workbook (.xlsx, its first sheet, the column names in the first row), CSV "
            "or JSONL file with the columns id, question, answer, source, source_url, language, "
            "status, variants (separated by |). A row whose id exists updates that entry. If the "
            "file has an error, nothing is imported.",
        ),
        "files.file": ("Tệp (.xlsx, .csv, .jsonl)", "File (.xlsx, .csv, .jsonl)"),
        "files.as_draft": (
            "Nhập dưới dạng bản nháp (chưa trả lời cho đến khi xuất bản)",
            "Import as drafts (not answering until published)",
        ),
        "files.import_failed": (
            "Không nhập được, không có mục nào thay đổi: {reason}",
            "Import failed, nothing was changed: {reason}",
        ),
        "files.imported": (
            "Đã nhập {n} mục ({created} mới, {updated} cập nhật).",
            "Imported {n} entries ({created} new, {updated} updated).",
        ),
        "files.no_file": ("Chưa chọn tệp.", "No file was chosen."),
        "files.too_large": ("Tệp quá lớn.", "The file is too large."),
        "files.not_utf8": ("Tệp không phải UTF-8.", "The file is not UTF-8 text."),
    }
)


async def _page(
    request: web.Request,
    *,
    error: str = "",
    export_error: str = "",
    imported: int | None = None,
    created: int = 0,
    status: int = 200,
) -> web.Response:
    return await render(
        request,
        "faq_files.html",
        {
            "error": error,
            "export_error": export_error,
            "imported": imported,
            "created": created,
            "updated": (imported or 0) - created,
            "can_edit": me(request).may(StaffRole.editor),
        },
        status=status,
    )


async def files_page(request: web.Request) -> web.Response:
    return await _page(request)


async def export(request: web.Request) -> web.Response:
    kind = request.query.get("format", "jsonl")
    if kind not in EXPORTS:
        raise web.HTTPNotFound()
    content_type, suffix = EXPORTS[kind]
    async with runtime(request).sessionmaker() as session:
        entries = (
            await session.scalars(
                select(FaqEntry).options(selectinload(FaqEntry.variants)).order_by(FaqEntry.id)
            )
        ).all()
    try:
        body = faq_file_bytes(entries, suffix)
    except FaqFileError as exc:  # an answer longer than an Excel cell holds
        return await _page(request, export_error=str(exc), status=409)
    if kind == "csv":  # spreadsheet programs read UTF-8 CSV right only with the BOM
        body = "\ufeff".encode() + body
    name = f"faq-{utcnow():%Y%m%d-%H%M}{suffix}"
    return web.Response(
        body=body,
        content_type=content_type,
        charset=None if kind == "xlsx" else "utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@requires(StaffRole.editor)
async def import_file(request: web.Request) -> web.Response:
    data = await form(request)
    upload = data.get("file")
    if not isinstance(upload, web.FileField) or not upload.filename:
        return await _page(request, error=_word(request, "files.no_file"), status=400)
    raw = upload.file.read(MAX_IMPORT_BYTES + 1)
    if len(raw) > MAX_IMPORT_BYTES:
        return await _page(request, error=_word(request, "files.too_large"), status=400)
    name = Path(upload.filename).name
    try:
        # a workbook takes a while to unzip and parse: not on the loop every page shares
        drafts = await asyncio.to_thread(parse_faq_bytes, raw, name)
    except UnicodeDecodeError:
        return await _page(request, error=_word(request, "files.not_utf8"), status=400)
    except FaqFileError as exc:
        return await _page(request, error=str(exc), status=400)
    as_draft = data.get("as_draft") == "1"
    actor = me(request).email
    rt = runtime(request)
    created = 0
    async with rt.sessionmaker.begin() as session:
        for draft in drafts:
            if as_draft:
                draft.status = FaqStatus.draft
            draft.updated_by = actor
            existing = None
            if draft.external_id:
                existing = await session.scalar(
                    select(FaqEntry).where(FaqEntry.external_id == draft.external_id)
                )
            before = snapshot(existing) if existing is not None else None
            entry = await upsert_faq(session, rt.indexer, draft)
            created += before is None
            await audit.record(session, actor, "import", "faq", entry.id, before, snapshot(entry))
    return await _page(request, imported=len(drafts), created=created)


def _word(request: web.Request, key: str) -> str:
    return translator(request)(key)


def setup(app: web.Application) -> None:
    app.router.add_get("/faq/files", files_page, name="admin.faq_files")
    app.router.add_get("/faq/export", export, name="admin.faq_export")
    app.router.add_post("/faq/import", import_file, name="admin.faq_import")
