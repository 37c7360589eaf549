"""The Dashboard over real HTTP against rows inserted for a past week: messages per day by
channel, tiers per day, response-time percentiles (checked against numpy's), the top
unanswered group; and the SVG chart helper's arithmetic."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from admin.charts import Series, line_chart, nice_step, stacked_bars
from admin.period import Period
from bot.conversations.quarantine import quarantine_event
from bot.conversations.store import upsert_conversation
from bot.db.models import Author, Direction, Message, MessageStatus
from tests.admin._support import AdminBrowser

WEEK = "days=7&end=2024-03-10"
MAR8 = datetime(2024, 3, 8, 9, tzinfo=UTC)
MAR10 = datetime(2024, 3, 10, 23, 30, tzinfo=UTC)
BEFORE = datetime(2024, 3, 1, 12, tzinfo=UTC)
UNANSWERED = "Trường có dạy tiếng Nhật không?"


async def insert_week(sm: async_sessionmaker[AsyncSession]) -> None:
    async with sm.begin() as session:
        convs = {
            c: await upsert_conversation(session, c, f"dash-{c}")
            for c in ("telegram", "web", "messenger")
        }

        async def question(
            channel: str, at: datetime, seconds: float | None, text: str = "q"
        ) -> int:
            m = Message(
                conversation_id=convs[channel],
                channel=channel,
                direction=Direction.inbound,
                author=Author.user,
                text=text,
                status=MessageStatus.answered if seconds is not None else MessageStatus.skipped,
                created_at=at,
                done_at=at + timedelta(seconds=seconds or 0),
            )
            session.add(m)
            await session.flush()
            return m.id

        def reply(channel: str, at: datetime, tier: str | None, to: int | None = None) -> None:
            session.add(
                Message(
                    conversation_id=convs[channel],
                    channel=channel,
                    direction=Direction.outbound,
                    author=Author.bot if tier else Author.staff,
                    text="a",
                    tier=tier,
                    details={"scores": {"doc_best": 0.5}},
                    status=MessageStatus.sent,
                    created_at=at,
                    reply_to_id=to,
                )
            )

        for seconds in (1, 2, 3, 10):
            await question("telegram", MAR8, seconds)
        await question("web", MAR8, None)
        await question("web", MAR8 + timedelta(hours=1), None)
        asked = await question("messenger", MAR10, 4, UNANSWERED)
        await question("telegram", BEFORE, 100)  # the week before: not counted
        for tier in ("faq", "faq", "faq", "documents"):
            reply("telegram", MAR8, tier)
        reply("messenger", MAR10 + timedelta(seconds=4), "fallback", asked)
        reply("messenger", MAR10, None)  # a staff message: not a tier
        reply("telegram", BEFORE, "faq")


def cell(page: str, testid: str) -> str:
    found = re.search(rf'data-testid="{testid}">([^<]*)<', page)
    assert found, testid
    return found.group(1)


async def test_the_numbers_match_the_rows_of_the_week(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await insert_week(sessionmaker)
    page = await viewer.page(f"/admin/dashboard?{WEEK}")

    assert cell(page, "messages-2024-03-08-telegram") == "4"
    assert cell(page, "messages-2024-03-08-web") == "2"
    assert cell(page, "messages-2024-03-08-total") == "6"
    assert cell(page, "messages-2024-03-10-messenger") == "1"
    assert cell(page, "messages-2024-03-09-total") == "0"  # a day without messages is there
    assert cell(page, "messages-total") == "7"
    assert "2024-03-01" not in page

    assert cell(page, "tiers-2024-03-08-faq") == "3"
    assert cell(page, "tiers-2024-03-08-documents") == "1"
    assert cell(page, "tiers-2024-03-10-fallback") == "1"
    assert cell(page, "tiers-total-faq") == "3 (60%)"
    assert cell(page, "tiers-total-fallback") == "1 (20%)"

    day = np.array([1.0, 2.0, 3.0, 10.0])
    week = np.array([1.0, 2.0, 3.0, 10.0, 4.0])
    assert cell(page, "latency-2024-03-08-p50") == f"{np.percentile(day, 50):.2f}"  # 2.50
    assert cell(page, "latency-2024-03-08-p95") == f"{np.percentile(day, 95):.2f}"  # 8.95
    assert cell(page, "latency-2024-03-10-p50") == "4.00"
    assert cell(page, "latency-total-p50") == f"{np.percentile(week, 50):.2f}"  # 3.00
    assert cell(page, "latency-total-p95") == f"{np.percentile(week, 95):.2f}"  # 8.80

    top = re.search(r'data-testid="top-group-1"><td>([^<]*)</td><td>(\d+)</td>', page)
    assert top
    assert (top.group(1), top.group(2)) == (UNANSWERED, "1")

    for chart in ("messages", "tiers", "latency"):
        assert f'data-testid="chart-{chart}"' in page
    assert "<title>telegram 03-08: 4</title>" in page  # a bar's tooltip
    assert "<script>" not in page
    assert "style=" not in page


async def test_an_empty_period_and_odd_parameters_still_show_a_page(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page("/admin/dashboard?days=5&end=nonsense")
    assert 'data-testid="period-range"' in page  # 5 is not offered: the default 30 days
    period = Period.from_query({"days": "5", "end": "nonsense"})
    assert period.days == 30
    assert period.first.isoformat() in page
    empty = await viewer.page("/admin/dashboard?days=7&end=2001-01-01")
    assert "Chưa có dữ liệu trong khoảng thời gian này." in empty
    assert "chart-messages" not in empty


def test_stacked_bars_scale_to_a_round_maximum_and_stack() -> None:
    assert [nice_step(v, whole=True) for v in (0, 3, 6, 11, 26, 400)] == [1, 1, 2, 5, 10, 100]
    assert [nice_step(v) for v in (0.4, 3.0, 9.0)] == [0.1, 1.0, 5.0]
    chart = stacked_bars(
        "t",
        ["a", "b"],
        [Series("x", [2, 0], "#000"), Series("y", [3, 5], "#111")],
    )
    heights = {bar.title: bar.height for bar in chart.bars}
    assert set(heights) == {"x a: 2", "y a: 3", "y b: 5"}  # no bar for a zero
    assert heights["y b: 5"] == heights["x a: 2"] + heights["y a: 3"]
    assert [t.label for t in chart.y_ticks] == ["0", "2", "4", "6"]
    [xa] = [b for b in chart.bars if b.title == "x a: 2"]
    [ya] = [b for b in chart.bars if b.title == "y a: 3"]
    assert ya.y + ya.height == xa.y  # "y" sits on top of "x"


def test_a_line_breaks_where_a_day_has_no_value() -> None:
    chart = line_chart("t", ["a", "b", "c", "d"], [Series("p50", [1.0, None, 2.0, 3.0], "#000")])
    [line] = chart.lines
    assert len(line.segments) == 2
    assert len(line.segments[1].split()) == 2
    assert [p.title for p in line.points] == ["p50 a: 1", "p50 c: 2", "p50 d: 3"]


async def test_quarantined_webhook_events_are_counted_on_the_dashboard(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    assert 'data-testid="quarantined"' not in await viewer.page("/admin/dashboard")
    async with sessionmaker.begin() as session:
        for n in range(2):
            await quarantine_event(session, "messenger", b'{"object": "page"}', f"e{n}", "why")
    page = await viewer.page("/admin/dashboard")
    assert re.search(r'data-testid="quarantined">2 sự kiện webhook', page)
