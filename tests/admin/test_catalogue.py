"""The Catalogue page ("Danh mục") over real HTTP on the demo knowledge base: what ingest read
from the tables, staff's corrections that the next ingest keeps, a value taken out of the
answers, export and import, roles and escaping."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import CatalogueRow, FactRow
from bot.knowledge.demo import demo_kb_dir
from retrieval.facts.book import current_book
from retrieval.index.documents import index_document
from retrieval.index.indexer import Indexer
from retrieval.loading import load_file
from tests.admin._support import AdminBrowser

pytestmark = pytest.mark.usefixtures("demo_kb")


async def _major(sm: async_sessionmaker[AsyncSession], name: str) -> CatalogueRow:
    async with sm() as session:
        rows = (
            await session.scalars(
                select(CatalogueRow).where(CatalogueRow.kind == "major", CatalogueRow.name == name)
            )
        ).all()
    assert rows, name
    return rows[0]


def _file(content: str, csrf: str) -> aiohttp.FormData:
    data = aiohttp.FormData(quote_fields=False)
    data.add_field("csrf_token", csrf)
    data.add_field("file", io.BytesIO(content.encode()), filename="catalogue.jsonl")
    return data


async def test_the_page_lists_the_majors_and_values_with_their_source(viewer: AdminBrowser) -> None:
    page = await viewer.page("/admin/catalogue")
    assert "Danh mục" in page
    assert "Khoa học Máy tính" in page
    assert "7480101" in page
    assert "26,85" in page  # a cut-off of the demo's table
    assert "Điểm chuẩn năm 2025 › Điểm chuẩn 2025 – chương trình chuẩn, hàng 1, cột THPT" in page
    assert "cat-add-form" not in page  # viewers read only


async def test_a_staff_correction_survives_the_next_ingest(
    editor: AdminBrowser,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    tmp_path: Path,
) -> None:
    item = await _major(sessionmaker, "Thiết kế Vi mạch")
    response = await editor.post(
        f"/admin/catalogue/items/{item.id}",
        {"name": "Thiết kế vi mạch <b>bán dẫn</b>", "code": "7520218", "aliases": "tkvm, vi mach"},
    )
    assert response.status == 303
    saved = await _major(sessionmaker, "Thiết kế vi mạch <b>bán dẫn</b>")
    # The name the tables use stays a way to ask for it.
    assert (saved.origin, saved.aliases) == ("staff", ["tkvm", "vi mach", "Thiết kế Vi mạch"])
    page = await editor.page("/admin/catalogue")
    assert "Thiết kế vi mạch &lt;b&gt;bán dẫn&lt;/b&gt;" in page
    # The document changes and is ingested again: the extracted items are read anew, the
    # staff's is left as it is.
    source = demo_kb_dir() / "docs" / "diem-chuan-2025.md"
    copy = tmp_path / "diem-chuan-2025.md"
    copy.write_text(source.read_text(encoding="utf-8") + "\n\nCập nhật.\n", encoding="utf-8")
    async with sessionmaker.begin() as session:
        await index_document(session, indexer, load_file(copy))
    async with sessionmaker() as session:
        names = (
            await session.scalars(select(CatalogueRow.name).where(CatalogueRow.kind == "major"))
        ).all()
    assert "Thiết kế Vi mạch" not in names  # not read again under the table's name
    assert (await _major(sessionmaker, "Thiết kế vi mạch <b>bán dẫn</b>")).code == "7520218"


async def test_a_value_taken_out_of_the_answers_is_not_used(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker() as session:
        fact = await session.scalar(
            select(FactRow).where(FactRow.text == "26,85", FactRow.method.is_not(None))
        )
    assert fact is not None
    response = await editor.post(f"/admin/catalogue/facts/{fact.id}", {"action": "unpublish"})
    assert response.status == 303
    async with sessionmaker() as session:
        book = await current_book(session)
        assert not any(f.text == "26,85" and f.method == fact.method for f in book.facts)
    response = await editor.post(f"/admin/catalogue/facts/{fact.id}", {"text": "abc"})
    assert response.status == 400
    assert "Giá trị phải là một số." in await response.text()
    response = await editor.post(f"/admin/catalogue/facts/{fact.id}", {"text": "26,90"})
    assert response.status == 303
    async with sessionmaker() as session:
        stored = await session.get(FactRow, fact.id)
        assert stored is not None
        assert (stored.text, stored.value, stored.origin) == ("26,90", 26.9, "staff")


async def test_export_then_import_round_trips_and_a_bad_file_changes_nothing(
    editor: AdminBrowser, viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    response = await viewer.get("/admin/catalogue/export")
    assert response.status == 200
    lines = [json.loads(x) for x in (await response.text()).splitlines()]
    assert {"kind": "major", "name": "Khoa học Máy tính", "code": "7480101"}.items() <= next(
        x for x in lines if x["name"] == "Khoa học Máy tính"
    ).items()
    added = json.dumps({"kind": "major", "name": "Y khoa", "aliases": ["bác sĩ đa khoa"]})
    response = await editor.post(
        "/admin/catalogue/import", _file(added + "\n", editor.csrf), csrf=""
    )
    assert response.status == 303
    item = await _major(sessionmaker, "Y khoa")
    assert (item.origin, item.aliases) == ("staff", ["bác sĩ đa khoa"])
    bad = '{"kind": "faculty", "name": "X"}\n'
    response = await editor.post("/admin/catalogue/import", _file(bad, editor.csrf), csrf="")
    assert response.status == 400
    assert "line 1: no kind or name" in await response.text()
    response = await viewer.post("/admin/catalogue/import", _file(added, viewer.csrf), csrf="")
    assert response.status == 403


async def test_values_that_disagree_are_shown_to_staff(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker.begin() as session:
        session.add(
            FactRow(
                attribute="điểm chuẩn", major="Khoa học Máy tính", programme=None,
                method="thi tốt nghiệp THPT", year=2025, text="27,00", value=27.0, origin="staff",
            )
        )  # fmt: skip
    page = await viewer.page("/admin/catalogue")
    clashes = page.split('data-testid="cat-clashes"')[1].split("</ul>")[0]
    assert "điểm chuẩn, Khoa học Máy tính, thi tốt nghiệp THPT 2025" in clashes
    assert "26,85" in clashes
    assert "27,00" in clashes


async def test_with_review_on_new_values_wait_for_staff_and_unchanged_ones_stay_published(
    editor: AdminBrowser,
    viewer: AdminBrowser,
    sessionmaker: async_sessionmaker[AsyncSession],
    indexer: Indexer,
    tmp_path: Path,
) -> None:
    reviewing = dataclasses.replace(indexer, facts_review=True)
    path = tmp_path / "chi-tieu-2026.md"
    table = "# Chỉ tiêu năm 2026\n\n| Ngành | Mã ngành | Chỉ tiêu |\n|---|---|---|\n"
    path.write_text(table + "| Công nghệ sinh học | 7420201 | 90 |\n", encoding="utf-8")
    async with sessionmaker.begin() as session:
        document_id = (await index_document(session, reviewing, load_file(path))).document_id

    async def quotas() -> list[tuple[str, str, bool]]:
        async with sessionmaker() as session:
            rows = await session.scalars(
                select(FactRow).where(FactRow.document_id == document_id).order_by(FactRow.major)
            )
            return [(r.major, r.text, r.published) for r in rows]

    assert await quotas() == [("Công nghệ sinh học", "90", False)]
    async with sessionmaker() as session:
        book = await current_book(session)
    assert not any(f.major == "Công nghệ sinh học" for f in book.facts)  # not answered with
    page = await viewer.page("/admin/catalogue")
    assert "giá trị đọc từ bảng đang chờ duyệt" in page
    assert "cat-approve-all" not in page  # viewers read only
    assert (await viewer.post("/admin/catalogue/facts/approve")).status == 403
    assert (await editor.post("/admin/catalogue/facts/approve")).status == 303
    assert await quotas() == [("Công nghệ sinh học", "90", True)]

    # the table grows: the value read unchanged stays published, the new one waits
    path.write_text(
        table + "| Công nghệ sinh học | 7420201 | 90 |\n| Thú y | 7640101 | 60 |\n",
        encoding="utf-8",
    )
    async with sessionmaker.begin() as session:
        await index_document(session, reviewing, load_file(path))
    assert await quotas() == [("Công nghệ sinh học", "90", True), ("Thú y", "60", False)]
    page = await editor.page("/admin/catalogue")
    assert ">Duyệt</button>" in page
