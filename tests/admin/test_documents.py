"""The Documents page over real HTTP: upload (a real PDF made with PyMuPDF, over the server's
1 MiB webhook limit, sent as a browser sends a form), a corrupt upload that changes nothing,
file names made safe, re-ingest, delete with what derives from it, escaping, roles."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import aiohttp
import pymupdf
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from admin import documents
from bot.core.settings import Settings
from bot.db.models import AuditEntry, Chunk, Document, FaqEntry, FaqOrigin
from tests.admin._support import AdminBrowser

TITLE = "Scholarship rules <script>alert('x')</script>"
RULES = [
    "Students with a grade point average above 3.6 receive a full tuition scholarship.",
    "Applications for the merit scholarship close on the fifteenth of September.",
    "The scholarship is renewed each semester while the average stays above 3.2.",
]
NEW_RULES = [
    "From 2026 the merit scholarship covers half of the tuition for every semester.",
    "Applications now close on the thirtieth of September, online only.",
]


@pytest.fixture
def admin_settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(update={"data_dir": tmp_path / "data"})


def make_pdf(title: str, lines: list[str], *, noise: int = 0) -> bytes:
    """A one-page PDF with a text layer; ``noise`` bytes of incompressible image make it big."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    for i, line in enumerate(lines):
        page.insert_text((56, 72 + 18 * i), line, fontsize=10)
    if noise:
        side = int((noise / 3) ** 0.5) + 1
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, side, side, os.urandom(side * side * 3), False)
        page.insert_image(pymupdf.Rect(56, 300, 356, 600), pixmap=pixmap)
    pdf.set_metadata({"title": title})
    data: bytes = pdf.tobytes()
    pdf.close()
    return data


def upload_form(name: str, content: bytes, csrf: str) -> aiohttp.FormData:
    """The form as a browser posts it: the CSRF token as a field, before the file, whose name
    goes as UTF-8 (aiohttp would percent-encode it by default; browsers do not)."""
    data = aiohttp.FormData(quote_fields=False)
    data.add_field("csrf_token", csrf)
    data.add_field(
        "file", io.BytesIO(content), filename=name, content_type="application/octet-stream"
    )
    return data


async def upload(b: AdminBrowser, name: str, content: bytes) -> aiohttp.ClientResponse:
    return await b.post("/admin/documents/upload", upload_form(name, content, b.csrf), csrf="")


async def document(sm: async_sessionmaker[AsyncSession], source: str) -> Document | None:
    async with sm() as session:
        return await session.scalar(select(Document).where(Document.source == source))


async def chunk_texts(sm: async_sessionmaker[AsyncSession], document_id: int) -> str:
    async with sm() as session:
        rows = await session.scalars(select(Chunk.text).where(Chunk.document_id == document_id))
        return "\n".join(rows.all())


def uploads(settings: Settings) -> Path:
    return settings.data_dir / "uploads"


async def test_a_pdf_upload_is_indexed_and_listed_with_its_title_escaped(
    editor: AdminBrowser,
    viewer: AdminBrowser,
    admin_settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    content = make_pdf(TITLE, RULES, noise=1_300_000)
    assert len(content) > admin_settings.max_body_bytes  # over the webhooks' limit
    response = await upload(editor, "scholarships.pdf", content)
    assert response.status == 303, await response.text()
    assert response.headers["Location"] == "/admin/documents?msg=doc_indexed"

    stored = uploads(admin_settings) / "scholarships.pdf"
    assert stored.read_bytes() == content
    assert list((uploads(admin_settings) / ".incoming").iterdir()) == []
    found = await document(sessionmaker, str(stored))
    assert found is not None
    assert found.title == TITLE
    assert "full tuition scholarship" in await chunk_texts(sessionmaker, found.id)

    page = await viewer.page("/admin/documents")
    assert "<script>alert" not in page
    assert "Scholarship rules &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert f'data-testid="doc-state-{found.id}">đã lập chỉ mục<' in page
    assert "doc-upload-form" not in page  # viewers read only
    assert "scholarships.pdf" in page.split('data-testid="doc-recent"')[1]  # recent activity
    async with sessionmaker() as session:
        [entry] = await session.scalars(
            select(AuditEntry).where(AuditEntry.entity == "document", AuditEntry.action == "upload")
        )
    assert (entry.entity_id, entry.after["chunks"]) == (found.id, 1)


async def test_an_upload_over_the_limit_is_refused(
    editor: AdminBrowser, admin_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents, "MAX_UPLOAD_BYTES", 1_000_000)
    response = await upload(editor, "big.pdf", make_pdf("Big", RULES, noise=1_300_000))
    assert response.status == 413
    assert not (uploads(admin_settings) / "big.pdf").exists()


async def test_a_corrupt_file_gives_a_clear_message_and_changes_nothing(
    editor: AdminBrowser, admin_settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    good = make_pdf("Scholarship rules", RULES)
    assert (await upload(editor, "rules.pdf", good)).status == 303
    stored = uploads(admin_settings) / "rules.pdf"
    before = await document(sessionmaker, str(stored))
    assert before is not None

    broken = good[: len(good) // 2]  # cut off mid-file, as an interrupted download
    response = await upload(editor, "rules.pdf", broken)
    assert response.status == 422
    page = await response.text()
    assert "Không đọc được tệp, không có gì bị thay đổi" in page
    assert "truncated PDF" in page or "corrupt PDF" in page
    assert stored.read_bytes() == good  # the good file is still there
    after = await document(sessionmaker, str(stored))
    assert after is not None
    assert after.content_hash == before.content_hash
    assert "full tuition" in await chunk_texts(sessionmaker, after.id)
    assert list((uploads(admin_settings) / ".incoming").iterdir()) == []

    response = await upload(editor, "notes.pdf", b"%PDF-1.4\n1 0 obj garbage\n%%EOF\n")
    assert response.status == 422
    assert "PDF has no pages" in await response.text()
    assert not (uploads(admin_settings) / "notes.pdf").exists()
    assert await document(sessionmaker, str(uploads(admin_settings) / "notes.pdf")) is None
    async with sessionmaker() as session:
        failures = await session.scalar(
            select(func.count())
            .select_from(AuditEntry)
            .where(AuditEntry.entity == "document", AuditEntry.action == "upload_failed")
        )
    assert failures == 2


async def test_file_names_are_made_safe_and_other_types_refused(
    editor: AdminBrowser, admin_settings: Settings
) -> None:
    text = "Ký túc xá mở cửa từ 6 giờ đến 22 giờ mỗi ngày, kể cả cuối tuần.\n".encode()
    response = await upload(editor, "..\\..\\Quy chế ký túc xá (bản mới).TXT", text)
    assert response.status == 303
    assert [p.name for p in uploads(admin_settings).iterdir() if p.is_file()] == [
        "Quy_chế_ký_túc_xá_bản_mới.txt"
    ]
    refused = await upload(editor, "setup.exe", b"MZ\x90\x00")
    assert refused.status == 400
    assert "Loại tệp này không được hỗ trợ" in await refused.text()
    empty = await editor.post("/admin/documents/upload", {}, csrf="")
    assert empty.status == 403  # no CSRF token
    missing = await editor.post("/admin/documents/upload", {})
    assert missing.status == 400


async def test_reingest_reads_the_changed_file_and_delete_removes_what_came_from_it(
    editor: AdminBrowser, admin_settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    assert (await upload(editor, "rules.pdf", make_pdf("Rules", RULES))).status == 303
    stored = uploads(admin_settings) / "rules.pdf"
    found = await document(sessionmaker, str(stored))
    assert found is not None

    same = await editor.post(f"/admin/documents/{found.id}/reingest")
    assert same.headers["Location"] == "/admin/documents?msg=doc_unchanged"
    stored.write_bytes(make_pdf("Rules", NEW_RULES))
    changed = await editor.post(f"/admin/documents/{found.id}/reingest")
    assert changed.headers["Location"] == "/admin/documents?msg=doc_indexed"
    texts = await chunk_texts(sessionmaker, found.id)
    assert "half of the tuition" in texts
    assert "full tuition" not in texts

    async with sessionmaker.begin() as session:
        generated = FaqEntry(
            question="When do scholarship applications close?",
            answer="On the thirtieth of September.",
            origin=FaqOrigin.generated,
            source_document_id=found.id,
        )
        session.add(generated)
    page = await editor.page("/admin/documents")
    assert "1 nháp · 0 đã xuất bản" in page
    assert "docs.confirm_delete" not in page  # the confirmation is in words
    assert 'data-confirm="Xoá tài liệu này' in page

    assert (await editor.post(f"/admin/documents/{found.id}/delete", csrf="")).status == 403
    deleted = await editor.post(f"/admin/documents/{found.id}/delete")
    assert deleted.headers["Location"] == "/admin/documents?msg=doc_deleted"
    assert await document(sessionmaker, str(stored)) is None
    async with sessionmaker() as session:
        assert await session.get(FaqEntry, generated.id) is None
        chunks = await session.scalar(
            select(func.count()).select_from(Chunk).where(Chunk.document_id == found.id)
        )
        actions = (
            await session.scalars(
                select(AuditEntry.action)
                .where(AuditEntry.entity == "document", AuditEntry.entity_id == found.id)
                .order_by(AuditEntry.id)
            )
        ).all()
    assert chunks == 0
    assert not stored.exists()
    assert actions == ["upload", "reingest", "delete"]


async def test_a_web_page_or_a_vanished_file_is_not_reingested_here(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker.begin() as session:
        page = Document(source="https://tuyensinh.shut.example.vn/hoc-bong", content_hash="x")
        gone = Document(source="/nowhere/rules.pdf", content_hash="y")
        session.add_all([page, gone])
    response = await editor.post(f"/admin/documents/{page.id}/reingest")
    assert response.status == 400
    assert "tuvan crawl" in await response.text()
    response = await editor.post(f"/admin/documents/{gone.id}/reingest")
    assert response.status == 400
    assert "Không còn tệp tại đường dẫn này" in await response.text()
    assert (await editor.post("/admin/documents/999999999/reingest")).status == 404


async def test_the_list_searches_and_links_only_web_addresses(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker.begin() as session:
        session.add_all(
            [
                Document(
                    source="/kb/a.md", title="Học bổng", url="https://x.vn/a", content_hash="a"
                ),
                Document(
                    source="/kb/b.md", title="Lạ", url="javascript:alert(1)", content_hash="b"
                ),
            ]
        )
    page = await viewer.page("/admin/documents?q=h%E1%BB%8Dc+b%E1%BB%95ng")  # học bổng
    assert '<a href="https://x.vn/a"' in page
    assert "/kb/b.md" not in page
    page = await viewer.page("/admin/documents?q=/kb/")
    assert "javascript:" not in page
    # a file without a web address: its title and its file's name, never the server path
    assert re.search(r">Lạ<br><small>b.md</small></td>", page)
    assert "/kb/" not in page.split('data-testid="doc-table"')[1]


async def test_staff_set_a_document_s_year_and_validity_which_a_reingest_keeps(
    editor: AdminBrowser,
    viewer: AdminBrowser,
    admin_settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    lines = ["Rules for the 2026 intake.", *RULES]
    assert (await upload(editor, "rules.pdf", make_pdf("Rules 2026", lines))).status == 303
    stored = uploads(admin_settings) / "rules.pdf"
    found = await document(sessionmaker, str(stored))
    assert found is not None
    assert (found.year, found.validity_by_staff) == (2026, False)  # read from its title

    for bad in ({"year": "20x6"}, {"year": "1850"}, {"valid_until": "31/12/2026"}):
        response = await editor.post(f"/admin/documents/{found.id}/validity", bad)
        assert response.status == 400
        assert "Năm phải là một năm" in await response.text()
    assert (
        await viewer.post(f"/admin/documents/{found.id}/validity", {"year": "2027"})
    ).status == 403
    saved = await editor.post(
        f"/admin/documents/{found.id}/validity", {"year": "2025", "valid_until": "2026-08-31"}
    )
    assert saved.headers["Location"] == "/admin/documents?msg=doc_validity"
    stored.write_bytes(make_pdf("Rules 2026", [*lines, *NEW_RULES]))
    assert (await editor.post(f"/admin/documents/{found.id}/reingest")).status == 303
    kept = await document(sessionmaker, str(stored))
    assert kept is not None
    assert (kept.year, str(kept.valid_until), kept.validity_by_staff) == (2025, "2026-08-31", True)
    page = await editor.page("/admin/documents")
    assert 'value="2026-08-31"' in page
    assert "do cán bộ đặt" in page

    back = await editor.post(f"/admin/documents/{found.id}/validity", {"reread": "1"})
    assert back.status == 303
    reread = await document(sessionmaker, str(stored))
    assert reread is not None
    assert (reread.year, reread.valid_until, reread.validity_by_staff) == (2026, None, False)
    async with sessionmaker() as session:
        changes = (
            await session.scalars(
                select(AuditEntry)
                .where(AuditEntry.entity_id == found.id, AuditEntry.action == "validity")
                .order_by(AuditEntry.id)
            )
        ).all()
    assert [(c.before["year"], c.after["year"]) for c in changes] == [(2026, 2025), (2025, 2026)]
    assert (
        await editor.post("/admin/documents/999999999/validity", {"year": "2026"})
    ).status == 404
