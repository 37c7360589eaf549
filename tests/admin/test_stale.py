"""Validity over real HTTP: an FAQ entry's year and valid-until date read from its text or set
by staff, the "Cần cập nhật" page listing what goes stale, and the dashboard's count of it."""

from __future__ import annotations

import re
from datetime import date, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import FaqEntry
from tests.admin._support import AdminBrowser

QUESTION = "Hạn nộp hồ sơ xét tuyển học bạ đợt 2 là khi nào?"


def _form(answer: str, **fields: str) -> dict[str, str]:
    return {"question": QUESTION, "answer": answer, "language": "vi", "status": "published",
            **fields}  # fmt: skip


async def _create(editor: AdminBrowser, answer: str, **fields: str) -> int:
    response = await editor.post("/admin/faq/new", _form(answer, **fields))
    assert response.status == 303, await response.text()
    found = re.fullmatch(r"/admin/faq/(\d+)\?msg=created", response.headers["Location"])
    assert found
    return int(found.group(1))


async def _entry(sm: async_sessionmaker[AsyncSession], faq_id: int) -> FaqEntry:
    async with sm() as session:
        entry = await session.get(FaqEntry, faq_id)
    assert entry is not None
    return entry


async def test_the_year_and_valid_until_are_read_from_the_text_or_set_by_staff(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    ahead = date.today() + timedelta(days=60)
    answer = f"Đợt 2 nhận hồ sơ đến 17h ngày {ahead.day}/{ahead.month}/{ahead.year}."
    faq_id = await _create(editor, answer)
    entry = await _entry(sessionmaker, faq_id)
    assert (entry.year, entry.valid_until) == (ahead.year, ahead)
    page = await editor.page(f"/admin/faq/{faq_id}")
    assert f'value="{ahead.isoformat()}"' in page
    # Staff clear the date: kept cleared while the text stays.
    response = await editor.post(f"/admin/faq/{faq_id}", _form(answer, year="", valid_until=""))
    assert response.status == 303
    assert (await _entry(sessionmaker, faq_id)).valid_until is None
    response = await editor.post(f"/admin/faq/{faq_id}", _form(answer, valid_until="31/02/2026"))
    assert response.status == 400
    assert "Ngày không hợp lệ." in await response.text()


async def test_the_stale_page_lists_an_expired_entry_and_the_dashboard_counts_it(
    editor: AdminBrowser, viewer: AdminBrowser
) -> None:
    yesterday = (date.today() - timedelta(days=1)).isoformat()
    faq_id = await _create(editor, "Đợt 2 đã đóng <b>rồi</b>.", valid_until=yesterday)
    page = await viewer.page("/admin/stale")
    row = page.split(f'data-testid="stale-faq-{faq_id}"')[1].split("</tr>")[0]
    assert QUESTION in row
    assert "Đã hết hiệu lực từ" in row
    assert f'href="/admin/faq/{faq_id}"' in row
    dashboard = await viewer.page("/admin/dashboard")
    count = re.search(r'data-testid="stale-count"><a href="/admin/stale">(\d+) mục', dashboard)
    assert count is not None
    assert int(count.group(1)) >= 1
