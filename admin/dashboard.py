"""The Dashboard: the headline numbers beside the previous period's (admin.headlines),
messages per day by channel, which tier answered, response times, and the biggest groups of the
"Cần xem lại" queue (admin.recheck), over the last 7, 30 or 90 days (UTC days).

Aggregation happens in PostgreSQL (``date_trunc`` per day, ``percentile_cont`` for the
percentiles), with bound parameters; days without rows are filled in here, so every chart has
one slot per day. Charts are server-side SVG (admin.charts) with the same numbers in tables.

- *Messages*: inbound messages from students, by channel.
- *Tiers*: the bot's replies by the tier that produced them (FAQ, documents, fallback, which
  staff read as "Chưa trả lời được"), the documents' answers split as the headline numbers
  split them (admin.headlines): confident, unsure, and "không rõ" on days with answers stored
  without a confidence.
- *Response time*: for answered questions, from the question's arrival (``created_at``) to its
  answer being stored (``done_at``): p50 and p95 per day, and over the whole period.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from aiohttp import web
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from admin.charts import PALETTE, Chart, Series, line_chart, stacked_bars
from admin.confidence import REVIEW_BELOW, confidence_sql
from admin.headlines import headlines, period_figures, previous_period
from admin.i18n import Translator, add_strings
from admin.keys import QUESTION_VECTORS
from admin.period import PERIODS, Period
from admin.recheck import faq_link, recheck_report
from admin.web import render, runtime, translator
from bot.conversations.inbound import HELD_ERROR
from bot.conversations.quarantine import count_quarantined
from bot.core.types import CHANNELS
from bot.db.models import Message
from bot.knowledge.staleness import stale_items

TOP_GROUPS = 5
TIERS = (
    "faq",
    "documents",
    "documents_sure",
    "documents_unsure",
    "documents_unknown",
    "fallback",
)
TIER_COLORS = {
    "faq": "#009e73",
    "documents": "#e69f00",
    "documents_sure": "#e69f00",
    "documents_unsure": "#cc79a7",
    "documents_unknown": "#9aa3ad",
    "fallback": "#d55e00",
}

add_strings(
    {
        "dash.title": ("Tổng quan", "Dashboard"),
        "dash.stale": (
            "{n} mục FAQ và tài liệu cần cập nhật",
            "{n} FAQ entries and documents to update",
        ),
        "dash.messages": ("Tin nhắn mỗi ngày theo kênh", "Messages per day by channel"),
        "dash.tiers": ("Tầng trả lời mỗi ngày", "Answers per day by tier"),
        "dash.latency": ("Thời gian phản hồi (giây)", "Response time (seconds)"),
        "dash.latency_help": (
            "Từ lúc câu hỏi đến tới lúc có câu trả lời, cho các câu hỏi đã được trả lời.",
            "From a question's arrival to its answer, for the questions answered.",
        ),
        "dash.unanswered": ("Nhóm câu hỏi cần xem lại nhiều nhất", "Top groups to look at again"),
        "dash.see_all": ("Xem tất cả", "See them all"),
        "dash.flooded": (
            "{n} câu hỏi gửi dồn dập (quá {cap} câu đang chờ trong một cuộc trò chuyện) không được "
            "trả lời trong khoảng thời gian này.",
            "{n} questions sent in a flood (past {cap} waiting in one conversation) were not "
            "answered in this period.",
        ),
        "dash.quarantined": (
            "{n} sự kiện webhook không lưu được đang nằm trong bảng quarantined_events "
            "(đã xác nhận với nền tảng; xem nhật ký máy chủ).",
            "{n} webhook events could not be stored and are kept in the quarantined_events "
            "table (acknowledged to the platform; see the server log).",
        ),
        "dash.day": ("Ngày", "Day"),
        "dash.total": ("Tổng", "Total"),
        "dash.period_total": ("Cả khoảng thời gian", "Whole period"),
        "dash.answered": ("Đã trả lời", "Answered"),
        "dash.p50": ("p50", "p50"),
        "dash.p95": ("p95", "p95"),
        "dash.share": ("{n} ({pct}%)", "{n} ({pct}%)"),
        "dash.table": ("Bảng số liệu", "The numbers"),
        "dash.none": ("Chưa có dữ liệu trong khoảng thời gian này.", "No data in this period."),
        "dash.tier.faq": ("FAQ", "FAQ"),
        "dash.tier.documents": ("Tài liệu", "Documents"),
        "dash.tier.documents_sure": ("Tài liệu, tuvan chắc chắn", "Documents, confident"),
        "dash.tier.documents_unsure": ("Tài liệu, tuvan không chắc", "Documents, unsure"),
        "dash.tier.documents_unknown": (
            "Tài liệu, không rõ độ tin cậy",
            "Documents, confidence not known",
        ),
        "dash.tier.fallback": ("Chưa trả lời được", "Not answered"),
    }
)

MESSAGES_PER_DAY = text(
    """
    SELECT date_trunc('day', created_at, 'UTC') AS day, channel AS key, count(*) AS n
    FROM messages
    WHERE direction = 'in' AND author = 'user' AND created_at >= :since AND created_at < :until
    GROUP BY 1, 2
    """
)

# The documents' answers by confidence against the staff's line, unless it is off (0).
_TIERS_PER_DAY = """
    SELECT date_trunc('day', created_at, 'UTC') AS day,
           CASE WHEN tier <> 'documents' OR :review_below <= 0 THEN tier
                WHEN confidence IS NULL THEN 'documents_unknown'
                WHEN confidence < :review_below THEN 'documents_unsure'
                ELSE 'documents_sure' END AS key,
           count(*) AS n
    FROM (
      SELECT created_at, tier, {confidence} AS confidence FROM messages m
      WHERE direction = 'out' AND author = 'bot' AND tier IS NOT NULL
        AND created_at >= :since AND created_at < :until
    ) AS answers
    GROUP BY 1, 2
"""
TIERS_PER_DAY = text(_TIERS_PER_DAY.format(confidence=confidence_sql("m")))

# ROLLUP adds the whole period's row (day NULL): percentiles cannot be combined from days.
_LATENCY = text(
    """
    SELECT date_trunc('day', created_at, 'UTC') AS day, count(*) AS n,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM done_at - created_at))
               AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM done_at - created_at))
               AS p95
    FROM messages
    WHERE direction = 'in' AND status = 'answered' AND done_at IS NOT NULL
      AND created_at >= :since AND created_at < :until
    GROUP BY ROLLUP (1)
    """
)


def _day(value: datetime) -> date:
    return value.astimezone(UTC).date()


@dataclass(frozen=True)
class Counts:
    """Counts per day and key (channel or tier), every day of the period present."""

    keys: list[str]
    days: list[date]
    by_day: dict[date, dict[str, int]]

    def total(self, day: date) -> int:
        return sum(self.by_day[day].values())

    def key_total(self, key: str) -> int:
        return sum(self.by_day[d].get(key, 0) for d in self.days)

    @property
    def grand_total(self) -> int:
        return sum(self.total(d) for d in self.days)

    def share(self, key: str) -> float:
        total = self.grand_total
        return 100.0 * self.key_total(key) / total if total else 0.0


async def daily_counts(
    session: AsyncSession,
    query: Any,
    period: Period,
    order: tuple[str, ...],
    params: dict[str, float] | None = None,
) -> Counts:
    by_day: dict[date, dict[str, int]] = {d: {} for d in period.dates()}
    seen: set[str] = set()
    bound = {"since": period.since, "until": period.until, **(params or {})}
    rows = await session.execute(query, bound)
    for r in rows:
        day = _day(r.day)
        if day in by_day:
            by_day[day][r.key] = int(r.n)
            seen.add(r.key)
    keys = [k for k in order if k in seen] + sorted(seen - set(order))
    return Counts(keys, period.dates(), by_day)


async def tier_counts(
    session: AsyncSession, period: Period, review_below: float = REVIEW_BELOW
) -> Counts:
    """The bot's replies per day by tier, the documents' split by ``review_below``."""
    return await daily_counts(session, TIERS_PER_DAY, period, TIERS, {"review_below": review_below})


@dataclass(frozen=True)
class Latency:
    day: date | None  # None: the whole period
    answered: int
    p50: float
    p95: float


async def reply_latency(
    session: AsyncSession, period: Period
) -> tuple[dict[date, Latency], Latency | None]:
    per_day: dict[date, Latency] = {}
    overall = None
    rows = await session.execute(_LATENCY, {"since": period.since, "until": period.until})
    for r in rows:
        if not r.n:  # ROLLUP's total row of an empty period: no percentiles
            continue
        found = Latency(
            _day(r.day) if r.day is not None else None, int(r.n), float(r.p50), float(r.p95)
        )
        if found.day is None:
            overall = found
        else:
            per_day[found.day] = found
    return per_day, overall


def _palette(keys: list[str], fixed: dict[str, str]) -> dict[str, str]:
    others = iter(c for c in PALETTE if c not in fixed.values())
    return {k: fixed.get(k) or next(others, "#5b6573") for k in keys}


def _bars(title: str, counts: Counts, names: dict[str, str], colors: dict[str, str]) -> Chart:
    labels = [d.strftime("%m-%d") for d in counts.days]
    series = [
        Series(names[k], [counts.by_day[d].get(k, 0) for d in counts.days], colors[k])
        for k in counts.keys
    ]
    return stacked_bars(title, labels, series)


def _latency_chart(t: Translator, days: list[date], per_day: dict[date, Latency]) -> Chart:
    labels = [d.strftime("%m-%d") for d in days]
    p50 = [per_day[d].p50 if d in per_day else None for d in days]
    p95 = [per_day[d].p95 if d in per_day else None for d in days]
    series = [Series(t("dash.p50"), p50, PALETTE[0]), Series(t("dash.p95"), p95, PALETTE[5])]
    return line_chart(t("dash.latency"), labels, series, unit=" s")


async def dashboard_page(request: web.Request) -> web.Response:
    period = Period.from_query(request.query)
    rt = runtime(request)
    t = translator(request)
    review_below = rt.settings.admin.review_below
    async with rt.sessionmaker() as session:
        messages = await daily_counts(session, MESSAGES_PER_DAY, period, CHANNELS)
        tiers = await tier_counts(session, period, review_below)
        per_day, overall = await reply_latency(session, period)
        quarantined = await count_quarantined(session)
        flooded = await session.scalar(
            select(func.count())
            .select_from(Message)
            .where(
                Message.error == HELD_ERROR,
                Message.created_at >= period.since,
                Message.created_at < period.until,
            )
        )
        stale = len(await stale_items(session, rt.settings.answer.admission_year, date.today()))
        before = previous_period(period)
        figures = await period_figures(session, period, review_below)
        figures_before = await period_figures(session, before, review_below)
    report = await recheck_report(rt, request.config_dict[QUESTION_VECTORS], period)
    tier_names = {k: t(f"dash.tier.{k}") if t.knows(f"dash.tier.{k}") else k for k in tiers.keys}
    return await render(
        request,
        "dashboard.html",
        {
            "period": period,
            "periods": PERIODS,
            "quarantined": quarantined,
            "flooded": flooded or 0,
            "flood_cap": rt.settings.limits.flood_per_conversation,
            "stale": stale,
            "headlines": headlines(t, figures, figures_before, review_below),
            "before": before,
            "messages": messages,
            "messages_chart": _bars(
                t("dash.messages"),
                messages,
                {k: k for k in messages.keys},
                _palette(messages.keys, {}),
            ),
            "tiers": tiers,
            "tier_names": tier_names,
            "tiers_chart": _bars(
                t("dash.tiers"), tiers, tier_names, _palette(tiers.keys, TIER_COLORS)
            ),
            "latency": per_day,
            "latency_overall": overall,
            "latency_chart": _latency_chart(t, period.dates(), per_day),
            "groups": report.groups[:TOP_GROUPS],
            "faq_link": lambda question: faq_link(request, question),
        },
    )


def setup(app: web.Application) -> None:
    app.router.add_get("/dashboard", dashboard_page, name="admin.dashboard")
