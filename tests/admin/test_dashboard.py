"""The Dashboard over real HTTP against rows inserted for a past week: messages per day by
channel, tiers per day, response-time percentiles (checked against numpy's), the top
unanswered group, the headline numbers beside the week before; and the SVG chart helper's
arithmetic."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from admin.charts import Series, line_chart, nice_step, stacked_bars
from admin.period import Period
from bot.conversations.quarantine import quarantine_event
from bot.conversations.store import record_inbound, upsert_conversation
from bot.core.messages import InboundMessage
from bot.db.models import AnswerFeedback, AuditEntry, Author, Direction, Message, MessageStatus
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
    # stored without a confidence: neither confident nor unsure (tests/admin/test_dashboard_unsure)
    assert cell(page, "tiers-2024-03-08-documents_unknown") == "1"
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


async def test_questions_held_in_a_flood_are_counted_on_the_dashboard(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    assert 'data-testid="flooded"' not in await viewer.page("/admin/dashboard")
    user = "flood-dashboard"
    async with sessionmaker.begin() as session:
        for n in range(5):
            message = InboundMessage(
                channel="telegram", event_id=f"{user}-{n}", external_user_id=user, kind="text",
                text=f"câu hỏi {n}",
            )  # fmt: skip
            await record_inbound(session, message, max_pending=1, flood=2)
    page = await viewer.page("/admin/dashboard")
    assert re.search(r'data-testid="flooded">3 câu hỏi gửi dồn dập \(quá 30 câu', page)


# -- the headline numbers, beside the previous period -------------------------------------------

HEADLINE_WEEK = "days=7&end=2023-05-14"  # 05-08 … 05-14; the week before: 05-01 … 05-07


async def insert_two_weeks(sm: async_sessionmaker[AsyncSession]) -> None:
    """This week: 4 questions (FAQ, documents, fallback, one staff answered), replies after 2, 4,
    10 and 60 s, votes 2 👍 1 👎, 2 conversations taken over (one twice). The week before:
    2 questions answered from the FAQ after 1 and 3 s, 1 👍, 1 conversation taken over."""
    async with sm.begin() as session:
        now_conv = await upsert_conversation(session, "telegram", "headline-now")
        before_conv = await upsert_conversation(session, "web", "headline-before")
        other_conv = await upsert_conversation(session, "zalo", "headline-other")

        async def message(
            conversation: int,
            at: datetime,
            *,
            author: Author,
            tier: str | None = None,
            kind: str = "text",
        ) -> Message:
            row = Message(
                conversation_id=conversation,
                channel="telegram",
                direction=Direction.inbound if author == Author.user else Direction.outbound,
                author=author,
                kind=kind,
                text="q" if author == Author.user else "a",
                tier=tier,
                status=MessageStatus.answered if author == Author.user else MessageStatus.sent,
                created_at=at,
            )
            session.add(row)
            await session.flush()
            return row

        async def asked(
            conversation: int, at: datetime, after_s: float, author: Author, tier: str | None
        ) -> Message:
            await message(conversation, at, author=Author.user)
            return await message(
                conversation, at + timedelta(seconds=after_s), author=author, tier=tier
            )

        def vote(reply: Message, value: int, at: datetime) -> None:
            session.add(
                AnswerFeedback(
                    message_id=reply.id,
                    conversation_id=reply.conversation_id,
                    channel="telegram",
                    value=value,
                    created_at=at,
                )
            )

        def taken_over(conversation: int, at: datetime) -> None:
            session.add(
                AuditEntry(
                    at=at,
                    actor="s@x.vn",
                    action="take_over",
                    entity="conversation",
                    entity_id=conversation,
                )
            )

        day = datetime(2023, 5, 9, 10, tzinfo=UTC)
        faq = await asked(now_conv, day, 2, Author.bot, "faq")
        docs = await asked(now_conv, day + timedelta(hours=1), 4, Author.bot, "documents")
        fallback = await asked(now_conv, day + timedelta(days=1), 10, Author.bot, "fallback")
        await asked(now_conv, day + timedelta(days=1, hours=1), 60, Author.staff, None)
        await message(now_conv, day + timedelta(days=2), author=Author.user, kind="command")
        vote(faq, 1, day)
        vote(docs, 1, day)
        vote(fallback, -1, day + timedelta(days=1))
        taken_over(now_conv, day + timedelta(days=1))
        taken_over(now_conv, day + timedelta(days=2))  # the same conversation again
        taken_over(other_conv, day + timedelta(days=3))

        week_before = datetime(2023, 5, 2, 8, tzinfo=UTC)
        first = await asked(before_conv, week_before, 1, Author.bot, "faq")
        await asked(before_conv, week_before + timedelta(days=1), 3, Author.bot, "faq")
        vote(first, 1, week_before)
        taken_over(before_conv, week_before + timedelta(days=1))

        # Outside both weeks: counted in neither.
        older = datetime(2023, 4, 30, 12, tzinfo=UTC)
        vote(await asked(other_conv, older, 500, Author.bot, "fallback"), -1, older)
        taken_over(other_conv, older)


async def test_headline_numbers_and_their_change_over_the_week_before(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await insert_two_weeks(sessionmaker)
    page = await viewer.page(f"/admin/dashboard?{HEADLINE_WEEK}")

    def row(key: str) -> tuple[str, str, str]:
        return (
            cell(page, f"headline-{key}-now"),
            cell(page, f"headline-{key}-before"),
            cell(page, f"headline-{key}-change"),
        )

    assert row("questions") == ("4", "2", "+2 (+100%)")  # the /start command is no question
    assert row("faq") == ("33%", "100%", "-67 điểm %")
    assert row("documents") == ("33%", "0%", "+33 điểm %")
    assert row("fallback") == ("33%", "0%", "+33 điểm %")
    assert row("thumbs") == ("67% · 2 👍 / 1 👎", "100% · 1 👍 / 0 👎", "-33 điểm %")
    assert row("median") == ("7.0 s", "2.0 s", "+5.0 s")  # median of 2, 4, 10, 60 s; of 1, 3 s
    assert row("handed") == ("2", "1", "+1 (+100%)")
    assert "2023-05-01 – 2023-05-07" in page
    assert "Chưa trả lời được" in page
    assert "Dự phòng" not in page


async def test_headline_numbers_of_an_empty_period_say_so_instead_of_dividing_by_zero(
    viewer: AdminBrowser,
) -> None:
    page = await viewer.page("/admin/dashboard?days=7&end=2001-01-14")
    assert cell(page, "headline-questions-now") == "0"
    assert cell(page, "headline-questions-change") == "+0"
    assert cell(page, "headline-faq-now") == "—"
    assert cell(page, "headline-thumbs-change") == "—"
    assert cell(page, "headline-median-now") == "—"
