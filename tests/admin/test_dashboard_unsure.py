"""The Dashboard's answers from documents split by the scorer's confidence against
``TUVAN_ADMIN__REVIEW_BELOW`` (0.8 here): confident, unsure, and "không rõ" only when a period
compared holds answers stored without a confidence; over two weeks of seeded rows, each beside
the week before, including empty weeks, in the headline numbers and the tiers per day."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.store import upsert_conversation
from bot.db.models import Author, Direction, Message, MessageStatus
from tests.admin._support import AdminBrowser

THIS_WEEK = "days=7&end=2023-06-11"  # 06-05 … 06-11; the week before: 05-29 … 06-04
NEXT_WEEK = "days=7&end=2023-06-18"  # empty, beside THIS_WEEK
EMPTY_WEEKS = "days=7&end=2001-06-10"  # empty, beside an empty week
DAY = datetime(2023, 6, 6, 10, tzinfo=UTC)
WEEK_BEFORE = datetime(2023, 5, 30, 10, tzinfo=UTC)


async def insert_answers(sm: async_sessionmaker[AsyncSession]) -> None:
    """This week: documents at 0.9, 0.95 and 0.3, an FAQ answer at 0.2, a fallback. The week
    before: two documents answers stored before confidences were, one at 0.85."""
    async with sm.begin() as session:
        conv = await upsert_conversation(session, "telegram", "dash-unsure")

        def reply(at: datetime, tier: str, confidence: Any = "absent") -> None:
            details: dict[str, Any] = {"scores": {"doc_best": 0.9}}
            if confidence != "absent":
                details["confidence"] = confidence
            session.add(
                Message(
                    conversation_id=conv,
                    channel="telegram",
                    direction=Direction.outbound,
                    author=Author.bot,
                    text="a",
                    tier=tier,
                    details=details,
                    status=MessageStatus.sent,
                    created_at=at,
                )
            )

        for confidence in (0.9, 0.95, 0.3):
            reply(DAY, "documents", confidence)
        reply(DAY, "faq", 0.2)  # unsure, but no documents answer
        reply(DAY + timedelta(days=1), "fallback", None)
        reply(WEEK_BEFORE, "documents")
        reply(WEEK_BEFORE, "documents", None)
        reply(WEEK_BEFORE, "documents", 0.85)


def row(page: str, key: str) -> tuple[str, str, str]:
    def cell(testid: str) -> str:
        found = re.search(rf'data-testid="{testid}">([^<]*)<', page)
        assert found, testid
        return found.group(1)

    return (
        cell(f"headline-{key}-now"),
        cell(f"headline-{key}-before"),
        cell(f"headline-{key}-change"),
    )


async def test_documents_answers_are_split_by_confidence_beside_the_week_before(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await insert_answers(sessionmaker)
    page = await viewer.page(f"/admin/dashboard?{THIS_WEEK}")
    assert row(page, "faq") == ("20%", "0%", "+20 điểm %")
    assert row(page, "documents") == ("60%", "100%", "-40 điểm %")
    assert row(page, "documents_sure") == ("40%", "33%", "+7 điểm %")
    assert row(page, "documents_unsure") == ("20%", "0%", "+20 điểm %")
    # The week before has answers without a confidence: "không rõ", not counted as either.
    assert row(page, "documents_unknown") == ("0%", "67%", "-67 điểm %")
    assert row(page, "fallback") == ("20%", "0%", "+20 điểm %")
    assert "trong đó: tuvan không chắc (độ tin cậy dưới 80%)" in page
    assert "trong đó: không rõ độ tin cậy" in page
    # Per day: confident and unsure; no "không rõ" column in a week without such answers.
    assert re.search(r'data-testid="tiers-2023-06-06-documents_sure">2<', page)
    assert re.search(r'data-testid="tiers-2023-06-06-documents_unsure">1<', page)
    assert 'data-testid="tiers-total-documents_unsure">1 (20%)<' in page
    assert "tiers-total-documents_unknown" not in page
    assert "Tài liệu, tuvan không chắc" in page

    before = await viewer.page("/admin/dashboard?days=7&end=2023-06-04")
    assert 'data-testid="tiers-total-documents_unknown">2 (67%)<' in before
    assert 'data-testid="tiers-total-documents_sure">1 (33%)<' in before
    assert "Tài liệu, không rõ độ tin cậy" in before


async def test_empty_weeks_say_so_and_show_no_unknown_row_without_such_answers(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await insert_answers(sessionmaker)
    after = await viewer.page(f"/admin/dashboard?{NEXT_WEEK}")
    assert row(after, "documents") == ("—", "60%", "—")
    assert row(after, "documents_sure") == ("—", "40%", "—")
    assert row(after, "documents_unsure") == ("—", "20%", "—")
    assert "headline-documents_unknown" not in after  # neither week has one

    empty = await viewer.page(f"/admin/dashboard?{EMPTY_WEEKS}")
    assert row(empty, "documents_unsure") == ("—", "—", "—")
    assert "headline-documents_unknown" not in empty
    assert "Chưa có dữ liệu trong khoảng thời gian này." in empty
