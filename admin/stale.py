"""The "Cần cập nhật" page (2/4): FAQ entries and documents going stale, with why, each linked
to where staff fix it (bot.knowledge.staleness). The dashboard counts them."""

from __future__ import annotations

from datetime import date

from aiohttp import web

from admin.i18n import add_strings
from admin.web import render, runtime
from bot.knowledge.staleness import current_admission_year, stale_items

add_strings(
    {
        "stale.title": ("Cần cập nhật", "To update"),
        "stale.intro": (
            "Mục FAQ và tài liệu có thể đã cũ với năm tuyển sinh {year}. Mục đã hết hiệu lực "
            "không còn được trả lời nguyên văn; hãy sửa hoặc gia hạn.",
            "FAQ entries and documents that may be out of date for the admission year {year}. "
            "An entry past its valid-until date is no longer answered word for word: update it "
            "or extend it.",
        ),
        "stale.kind.faq": ("Mục FAQ", "FAQ entry"),
        "stale.kind.document": ("Tài liệu", "Document"),
        "stale.item": ("Mục", "Item"),
        "stale.why": ("Vì sao", "Why"),
        "stale.expired": ("Đã hết hiệu lực từ {detail}", "Expired on {detail}"),
        "stale.expiring": ("Hết hiệu lực ngày {detail}", "Expires on {detail}"),
        "stale.dates_past": (
            "Mọi ngày trong câu trả lời đã qua (muộn nhất {detail})",
            "Every date in the answer has passed (the latest {detail})",
        ),
        "stale.older_year": ("Nói về năm cũ ({detail})", "About an earlier year ({detail})"),
        "stale.older_figures": (
            "Bảng số liệu cũ hơn tài liệu khác ({detail})",
            "Its table is older than another document's ({detail})",
        ),
        "stale.none": ("Không có mục nào cần cập nhật.", "Nothing to update."),
    }
)


async def stale_page(request: web.Request) -> web.Response:
    rt = runtime(request)
    today = date.today()
    async with rt.sessionmaker() as session:
        year = await current_admission_year(session, rt.settings.answer.admission_year, today)
        items = await stale_items(session, rt.settings.answer.admission_year, today)
    return await render(request, "stale.html", {"items": items, "year": year})


def setup(app: web.Application) -> None:
    app.router.add_get("/stale", stale_page, name="admin.stale")
