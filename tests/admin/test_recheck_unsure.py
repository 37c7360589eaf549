""" "tuvan không chắc" in "Cần xem lại", over real HTTP and the real PostgreSQL: FAQ and documents
answers whose stored confidence is below ``TUVAN_ADMIN__REVIEW_BELOW`` are listed without a 👎,
with their reason in Vietnamese, filtered and settled like the other signals; answers without a
confidence (older ones), fallbacks, malformed values and other periods are not; the line is the
setting's, and 0 turns the signal (and the dashboard's split) off."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.settings import Settings
from tests.admin._answers import FALLBACK, SURE, exchange, listed, vote
from tests.admin._support import AdminBrowser

END = datetime(2024, 3, 10, 12, tzinfo=UTC)
QUEUE = "/admin/recheck?days=7&end=2024-03-10"


@pytest.fixture
def admin_settings(admin_settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The admin tests' settings, with the line a test names (``indirect`` parametrization)."""
    below = getattr(request, "param", None)
    if below is None:
        return admin_settings
    section = admin_settings.admin.model_copy(update={"review_below": below})
    return admin_settings.model_copy(update={"admin": section})


def scored(confidence: Any) -> dict[str, Any]:
    return {**SURE, "confidence": confidence}


async def test_answers_below_the_line_are_listed_as_unsure_without_a_dislike(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    t = END - timedelta(days=1)
    sm = sessionmaker
    _, documents = await exchange(sm, "Học phí ngành KHMT?", "documents", t, details=scored(0.62))
    _, faq = await exchange(sm, "Mã trường là gì?", "faq", t, details=scored(0.4))
    _, sure = await exchange(sm, "Điểm chuẩn ngành Kế toán?", "documents", t, details=scored(0.93))
    _, at_the_line = await exchange(sm, "Trường ở đâu?", "faq", t, details=scored(0.8))
    _, old = await exchange(sm, "Ký túc xá có wifi không?", "documents", t)  # no confidence
    _, fallback = await exchange(
        sm, "Giá vé máy bay?", "fallback", t, details={**FALLBACK, "confidence": 0.1}
    )
    malformed = [
        (await exchange(sm, f"Câu hỏi {n}?", "documents", t, details=scored(value)))[1]
        for n, value in enumerate(["0.3", True, 1.7, -0.2, {"p": 0.1}, None])
    ]
    _, tiny = await exchange(sm, "Lệ phí xét tuyển?", "documents", t, details=scored(0.5))
    async with sm.begin() as session:  # numbers no float holds: JSON allows them
        for value, answer_id in (("1e400", malformed[-1]), ("1e-400", tiny)):
            await session.execute(
                text(
                    "UPDATE messages SET details = jsonb_set(details, '{confidence}', "
                    "CAST(:value AS jsonb)) WHERE id = :id"
                ),
                {"value": value, "id": answer_id},
            )
    _, last_month = await exchange(
        sm, "Học bổng?", "documents", END - timedelta(days=30), details=scored(0.5)
    )
    _, both = await exchange(sm, "Hạn nộp hồ sơ?", "documents", t, details=scored(0.55))
    await vote(sm, both, -1, t + timedelta(minutes=1))

    page = await editor.page(QUEUE)
    assert listed(page) == {
        documents: {"unsure"},
        faq: {"unsure"},
        fallback: {"fallback"},
        both: {"disliked", "unsure"},
        tiny: {"unsure"},  # 1e-400: a confidence of 0
    }
    for left_out in (sure, at_the_line, old, last_month, *malformed):
        assert f'data-testid="member-{left_out}"' not in page
    assert "tuvan không chắc (4)" in page
    assert re.search(rf'data-testid="signal-{documents}-unsure">tuvan không chắc · 62%<', page)
    only = listed(await editor.page(f"{QUEUE}&signal=unsure"))
    assert set(only) == {documents, faq, both, tiny}

    detail = html.unescape(await editor.page(f"/admin/recheck/{documents}"))
    why = re.search(r'data-testid="why-unsure">([^<]*)<', detail)
    assert why
    assert why.group(1) == "tuvan không chắc câu trả lời này (độ tin cậy 62%, dưới mức 80%)."
    assert 'data-testid="recheck-confidence">Độ tin cậy: 62%<' in detail
    # An answer without a confidence opened: no confidence shown, no unsure reason.
    opened = await editor.page(f"/admin/recheck/{old}")
    assert 'data-testid="why-none"' in opened
    assert "recheck-confidence" not in opened

    # "Đã xem" takes it out like any other; a later 👎 brings it back.
    response = await editor.post(f"/admin/recheck/{documents}/settle", {"next": QUEUE})
    assert response.status == 303
    assert documents not in listed(await editor.page(QUEUE))
    await vote(sm, documents, -1, datetime.now(UTC))
    assert listed(await editor.page(QUEUE))[documents] == {"disliked", "unsure"}


@pytest.mark.parametrize("admin_settings", [0.5], indirect=True)
async def test_the_line_is_the_staffs_setting(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    t = END - timedelta(days=1)
    _, above = await exchange(sessionmaker, "Học phí?", "documents", t, details=scored(0.62))
    _, below = await exchange(sessionmaker, "Chỉ tiêu?", "documents", t, details=scored(0.41))
    page = await viewer.page(QUEUE)
    assert listed(page) == {below: {"unsure"}}
    assert above not in listed(page)
    detail = html.unescape(await viewer.page(f"/admin/recheck/{below}"))
    assert "(độ tin cậy 41%, dưới mức 50%)" in detail


@pytest.mark.parametrize("admin_settings", [0.0], indirect=True)
async def test_zero_turns_the_signal_and_the_dashboards_split_off(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    t = END - timedelta(days=1)
    _, answer = await exchange(sessionmaker, "Học phí?", "documents", t, details=scored(0.0))
    page = await viewer.page(QUEUE)
    assert answer not in listed(page)
    assert "tuvan không chắc (0)" in page
    dashboard = await viewer.page("/admin/dashboard?days=7&end=2024-03-10")
    assert 'data-testid="headline-documents-now">100%<' in dashboard
    assert "headline-documents_sure" not in dashboard
    assert "headline-documents_unsure" not in dashboard
    assert 'data-testid="tiers-total-documents"' in dashboard
