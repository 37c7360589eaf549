"""FAQ import and export from the page: JSONL, CSV and Excel, all or nothing, audited, answering."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import aiohttp
from openpyxl import Workbook
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import AuditEntry, FaqEntry, FaqStatus
from bot.knowledge.faq_files import CSV_FIELDS, parse_faq_bytes
from tests.admin._support import AdminBrowser

ROWS: list[dict[str, Any]] = [
    {
        "id": "imp-ktx",
        "question": "Ký túc xá của trường có bao nhiêu chỗ cho tân sinh viên năm 2026?",
        "answer": "Ký túc xá khu A có 1.200 chỗ, ưu tiên tân sinh viên ở tỉnh xa (hạn 15/8).",
        "source": "ktx.md",
        "variants": ["ktx con cho khong", "chỗ ở ký túc xá"],
    },
    {
        "id": "imp-the",
        "question": "Làm thẻ sinh viên ở đâu?",
        "answer": "Phòng Công tác sinh viên, tầng 1 nhà A2, trong giờ hành chính.",
        "status": "draft",
    },
]


def upload(name: str, content: str | bytes, *, as_draft: bool = False) -> aiohttp.FormData:
    data = aiohttp.FormData()
    data.add_field("file", content.encode() if isinstance(content, str) else content, filename=name)
    if as_draft:
        data.add_field("as_draft", "1")
    return data


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def xlsx(rows: list[dict[str, Any]]) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(CSV_FIELDS)
    for row in rows:
        cells = {**row, "variants": " | ".join(row.get("variants", []))}
        sheet.append([cells.get(name) or None for name in CSV_FIELDS])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


async def count_entries(sm: async_sessionmaker[AsyncSession]) -> int:
    async with sm() as session:
        return int(await session.scalar(select(func.count()).select_from(FaqEntry)) or 0)


async def test_jsonl_import_creates_entries_that_answer_and_are_audited(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    response = await editor.post("/admin/faq/import", upload("faq.jsonl", jsonl(ROWS)))
    page = await response.text()
    assert response.status == 200
    assert "Đã nhập 2 mục (2 mới, 0 cập nhật)." in page
    answered = await editor.ask(ROWS[0]["question"])
    assert (answered["tier"], answered["said"]) == ("faq", ROWS[0]["answer"])
    async with sessionmaker() as session:
        draft = await session.scalar(select(FaqEntry).where(FaqEntry.external_id == "imp-the"))
        assert draft is not None
        assert draft.status == FaqStatus.draft
        actions = (
            await session.scalars(
                select(AuditEntry.action).where(
                    AuditEntry.entity_id == draft.id, AuditEntry.entity == "faq"
                )
            )
        ).all()
    assert actions == ["import"]
    # the same file again updates (by id) instead of duplicating
    again = await editor.post("/admin/faq/import", upload("faq.jsonl", jsonl(ROWS), as_draft=True))
    assert "(0 mới, 2 cập nhật)" in await again.text()
    assert (await editor.ask(ROWS[0]["question"])).get("faq_external_id") != "imp-ktx"


async def test_csv_import_reads_pipe_separated_phrasings(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=["id", "question", "answer", "variants"])
    writer.writeheader()
    writer.writerow(
        {
            **{k: ROWS[0][k] for k in ("id", "question", "answer")},
            "variants": "ktx còn chỗ không | ở ký túc xá",
        }
    )
    response = await editor.post("/admin/faq/import", upload("faq.csv", "\ufeff" + out.getvalue()))
    assert "Đã nhập 1 mục" in await response.text()
    async with sessionmaker() as session:
        entry = await session.scalar(select(FaqEntry).where(FaqEntry.external_id == "imp-ktx"))
        assert entry is not None
        await session.refresh(entry, ["variants"])
        assert {"ktx còn chỗ không", "ở ký túc xá"} <= {v.text for v in entry.variants}


async def test_a_malformed_file_imports_nothing_and_says_where(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    before = await count_entries(sessionmaker)
    broken = jsonl(ROWS[:1]) + '{"question": "thiếu ngoặc", "answer": "x"\n'
    response = await editor.post("/admin/faq/import", upload("faq.jsonl", broken))
    assert response.status == 400
    page = await response.text()
    assert "không có mục nào thay đổi" in page
    assert "line 2 is not valid JSON" in page
    missing = jsonl([ROWS[0], {"question": "Chỉ có câu hỏi?"}])
    response = await editor.post("/admin/faq/import", upload("faq.jsonl", missing))
    assert "entry 2 needs both a question and an answer" in await response.text()
    for name, content in (("faq.txt", "hello"), ("faq.csv", b"\xff\xfe\x00q")):
        assert (await editor.post("/admin/faq/import", upload(name, content))).status == 400
    assert await count_entries(sessionmaker) == before


async def test_xlsx_import_creates_entries_that_answer_with_their_phrasings(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    rows = [{**ROWS[0], "answer": ROWS[0]["answer"] + "\nĐăng ký tại phòng Công tác sinh viên."}]
    response = await editor.post("/admin/faq/import", upload("faq.xlsx", xlsx(rows + ROWS[1:])))
    assert response.status == 200
    assert "Đã nhập 2 mục (2 mới, 0 cập nhật)." in await response.text()
    answered = await editor.ask(ROWS[0]["question"])
    assert (answered["tier"], answered["said"]) == ("faq", rows[0]["answer"])
    async with sessionmaker() as session:
        entry = await session.scalar(select(FaqEntry).where(FaqEntry.external_id == "imp-ktx"))
        assert entry is not None
        await session.refresh(entry, ["variants"])
        assert set(ROWS[0]["variants"]) <= {v.text for v in entry.variants}
        assert entry.source == "ktx.md"
        draft = await session.scalar(select(FaqEntry).where(FaqEntry.external_id == "imp-the"))
        assert draft is not None
        assert draft.status == FaqStatus.draft


async def test_a_broken_workbook_is_a_visible_error_and_imports_nothing(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    before = await count_entries(sessionmaker)
    whole = xlsx(ROWS)
    for broken in (b"not a workbook", whole[: len(whole) // 2]):
        response = await editor.post("/admin/faq/import", upload("faq.xlsx", broken))
        assert response.status == 400
        page = await response.text()
        assert 'data-testid="import-error"' in page
        assert "không có mục nào thay đổi" in page
        assert "faq.xlsx is not a readable Excel workbook (.xlsx)" in page
    missing = xlsx([ROWS[0], {"id": "x", "question": "Chỉ có câu hỏi?"}])
    response = await editor.post("/admin/faq/import", upload("faq.xlsx", missing))
    assert response.status == 400
    assert "entry 2 needs both a question and an answer" in await response.text()
    assert await count_entries(sessionmaker) == before


async def test_export_round_trips_in_every_format(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    total = await count_entries(sessionmaker)
    for kind in ("jsonl", "csv", "xlsx"):
        async with viewer.http.get(viewer.url(f"/admin/faq/export?format={kind}")) as response:
            assert response.status == 200
            content = await response.read()
        disposition = response.headers["Content-Disposition"]
        assert disposition.startswith('attachment; filename="faq-')
        assert disposition.endswith(f'.{kind}"')
        drafts = parse_faq_bytes(content, f"export.{kind}")
        assert len(drafts) == total
        assert any(d.external_id == "shut-faq01" for d in drafts)
    assert (await viewer.get("/admin/faq/export?format=xml")).status == 404
    page = await viewer.page("/admin/faq/files")
    assert 'data-testid="export-xlsx"' in page
    assert 'data-testid="import-form"' not in page  # viewers export, editors import
    assert (await viewer.post("/admin/faq/import", upload("faq.jsonl", jsonl(ROWS)))).status == 403


async def test_an_answer_too_long_for_excel_is_said_on_the_page_not_a_broken_file(
    editor: AdminBrowser,
) -> None:
    long = {**ROWS[1], "id": "imp-dai", "answer": "đ" * 40_000}
    assert (await editor.post("/admin/faq/import", upload("faq.jsonl", jsonl([long])))).ok
    response = await editor.get("/admin/faq/export?format=xlsx")
    assert response.status == 409
    page = await response.text()
    assert 'data-testid="export-error"' in page
    assert "Không xuất được tệp: entry imp-dai: its answer has 40,000 characters" in page
    assert (await editor.get("/admin/faq/export?format=jsonl")).status == 200
