"""The Dashboard's headline numbers over a period, each beside the previous period of the same
length (the days just before it), and how it changed.

- *Questions*: the students' text messages (commands such as /start left out).
- *Answered from the FAQ / from documents / not answered*: shares of the bot's answers by the
  tier that gave them; "not answered" is the fallback ("Chưa trả lời được"). The documents'
  answers are split by the scorer's confidence (admin.confidence) against the staff's line
  (``TUVAN_ADMIN__REVIEW_BELOW``): confident, unsure, and, only when either period compared
  holds any, "không rõ" for answers stored without one (older replies), so old data is counted
  as neither. With the line at 0 (off) there is no split.
- *👍 rate*: of the votes on answers (``answer_feedback``, one per answer, by when it was first
  cast), the share that are 👍; the 👎 rate is the rest.
- *Median reply time*: from a question to the conversation's first outbound message after it
  (the bot's answer, or a staff reply where the bot stayed quiet); questions with no reply yet
  are left out.
- *Handed to staff*: conversations staff took over in the period (the audit log's
  ``take_over``: the button, or a reply in a conversation the bot was answering). A student's
  request for a person is not counted on its own: ``waiting_since`` holds only the current
  request, so a past period cannot be counted the same way; one staff answered was taken over.

One statement per period, bound parameters only; the bot's replies are counted in one pass
over the period (``ix_messages_created_at``); the reply times read the index on
(conversation, id) for the next outbound message of each question.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from admin.confidence import REVIEW_BELOW, confidence_sql
from admin.i18n import Translator, add_strings
from admin.period import Period

add_strings(
    {
        "dash.headlines": ("Số liệu chính", "Headline numbers"),
        "dash.headlines_help": (
            "So với {days} ngày liền trước ({first} – {end}).",
            "Compared with the {days} days before ({first} – {end}).",
        ),
        "dash.h.figure": ("Chỉ số", "Figure"),
        "dash.h.now": ("Khoảng này", "This period"),
        "dash.h.before": ("Khoảng trước", "Previous period"),
        "dash.h.change": ("Thay đổi", "Change"),
        "dash.h.questions": ("Câu hỏi", "Questions"),
        "dash.h.faq": ("Trả lời từ câu hỏi thường gặp", "Answered from the FAQ"),
        "dash.h.documents": ("Trả lời từ tài liệu", "Answered from documents"),
        "dash.h.documents_sure": ("trong đó: tuvan chắc chắn", "of which tuvan was confident"),
        "dash.h.documents_unsure": (
            "trong đó: tuvan không chắc (độ tin cậy dưới {below}%)",
            "of which tuvan was unsure (confidence below {below}%)",
        ),
        "dash.h.documents_unknown": (
            "trong đó: không rõ độ tin cậy (trả lời khi chưa lưu độ tin cậy)",
            "of which the confidence is not known (answered before it was stored)",
        ),
        "dash.h.fallback": ("Chưa trả lời được", "Not answered"),
        "dash.h.thumbs": ("Tỉ lệ 👍 (trên số lượt 👍/👎)", "👍 rate (of 👍/👎 votes)"),
        "dash.h.votes": ("{pct} · {up} 👍 / {down} 👎", "{pct} · {up} 👍 / {down} 👎"),
        "dash.h.median": ("Thời gian phản hồi (trung vị)", "Median reply time"),
        "dash.h.handed": ("Hội thoại nhân viên tiếp quản", "Conversations taken over by staff"),
        "dash.h.handed_help": (
            "Nhân viên bấm Tiếp quản hoặc trả lời khi trợ lý đang trả lời.",
            "Staff pressed Take over, or replied while the bot was answering.",
        ),
        "dash.h.points": ("{n} điểm %", "{n} pts"),
        "dash.h.none": ("—", "—"),
    }
)

# {confidence}: admin.confidence.confidence_sql, a fixed expression.
_FIGURES_SQL = """
    WITH answers AS (
      SELECT tier, {confidence} AS confidence FROM messages m
      WHERE direction = 'out' AND author = 'bot' AND tier IS NOT NULL
        AND created_at >= :since AND created_at < :until
    ), tiers AS (
      SELECT count(*) FILTER (WHERE tier = 'faq') AS faq,
             count(*) FILTER (WHERE tier = 'documents') AS documents,
             count(*) FILTER (WHERE tier = 'documents' AND confidence < :review_below)
               AS documents_unsure,
             count(*) FILTER (WHERE tier = 'documents' AND confidence IS NULL)
               AS documents_unknown,
             count(*) FILTER (WHERE tier = 'fallback') AS fallback
      FROM answers
    )
    SELECT
      (SELECT count(*) FROM messages
        WHERE direction = 'in' AND author = 'user' AND kind = 'text'
          AND created_at >= :since AND created_at < :until) AS questions,
      tiers.faq, tiers.documents, tiers.documents_unsure, tiers.documents_unknown, tiers.fallback,
      (SELECT count(*) FROM answer_feedback
        WHERE value = 1 AND created_at >= :since AND created_at < :until) AS up,
      (SELECT count(*) FROM answer_feedback
        WHERE value = -1 AND created_at >= :since AND created_at < :until) AS down,
      (SELECT percentile_cont(0.5) WITHIN GROUP (
                ORDER BY extract(epoch FROM first_reply.at - q.created_at))
         FROM messages q
         CROSS JOIN LATERAL (
           SELECT o.created_at AS at FROM messages o
           WHERE o.conversation_id = q.conversation_id AND o.id > q.id AND o.direction = 'out'
           ORDER BY o.id LIMIT 1) AS first_reply
        WHERE q.direction = 'in' AND q.author = 'user' AND q.kind = 'text'
          AND q.created_at >= :since AND q.created_at < :until) AS median_s,
      (SELECT count(DISTINCT entity_id) FROM audit_log
        WHERE entity = 'conversation' AND action = 'take_over'
          AND at >= :since AND at < :until) AS handed
    FROM tiers
"""
_FIGURES = text(_FIGURES_SQL.format(confidence=confidence_sql("m")))


@dataclass(frozen=True)
class Figures:
    """One period's numbers."""

    questions: int
    faq: int
    documents: int  # of which:
    documents_unsure: int  # below the staff's line
    documents_unknown: int  # stored without a confidence
    fallback: int
    up: int
    down: int
    median_s: float | None
    handed: int

    @property
    def answers(self) -> int:
        return self.faq + self.documents + self.fallback

    @property
    def documents_sure(self) -> int:
        return self.documents - self.documents_unsure - self.documents_unknown

    def share(self, key: str) -> float | None:
        """The percentage of the bot's answers counted under ``key`` (a tier, or a part of the
        documents' answers); None without answers."""
        count = {
            "faq": self.faq,
            "documents": self.documents,
            "documents_sure": self.documents_sure,
            "documents_unsure": self.documents_unsure,
            "documents_unknown": self.documents_unknown,
            "fallback": self.fallback,
        }[key]
        return 100.0 * count / self.answers if self.answers else None

    @property
    def thumbs_up(self) -> float | None:
        """The percentage of votes that are 👍; None without votes."""
        votes = self.up + self.down
        return 100.0 * self.up / votes if votes else None


async def period_figures(
    session: AsyncSession, period: Period, review_below: float = REVIEW_BELOW
) -> Figures:
    """``period``'s numbers; documents' answers under ``review_below`` count as unsure."""
    params = {"since": period.since, "until": period.until, "review_below": review_below}
    row = (await session.execute(_FIGURES, params)).one()
    return Figures(
        questions=int(row.questions),
        faq=int(row.faq),
        documents=int(row.documents),
        documents_unsure=int(row.documents_unsure),
        documents_unknown=int(row.documents_unknown),
        fallback=int(row.fallback),
        up=int(row.up),
        down=int(row.down),
        median_s=None if row.median_s is None else float(row.median_s),
        handed=int(row.handed),
    )


def previous_period(period: Period) -> Period:
    """The same number of days, ending the day before ``period`` starts."""
    return Period(period.days, period.first - timedelta(days=1))


@dataclass(frozen=True)
class Headline:
    """One row of the headline table, as shown."""

    key: str
    now: str
    before: str
    change: str
    label: str = ""  # the figure's name when it takes parameters (else "dash.h.<key>")
    part: bool = False  # a part of the row above


def _count_change(now: int, before: int) -> str:
    relative = f" ({100.0 * (now - before) / before:+.0f}%)" if before else ""
    return f"{now - before:+d}{relative}"


def _percent(value: float | None, none: str) -> str:
    return none if value is None else f"{value:.0f}%"


def _points(t: Translator, now: float | None, before: float | None) -> str:
    if now is None or before is None:
        return t("dash.h.none")
    return t("dash.h.points", n=f"{now - before:+.0f}")


def _seconds(value: float | None, none: str) -> str:
    return none if value is None else f"{value:.1f} s"


def _share(
    t: Translator, key: str, now: Figures, before: Figures, *, label: str = "", part: bool = False
) -> Headline:
    none = t("dash.h.none")
    return Headline(
        key,
        _percent(now.share(key), none),
        _percent(before.share(key), none),
        _points(t, now.share(key), before.share(key)),
        label,
        part,
    )


def _documents_parts(
    t: Translator, now: Figures, before: Figures, review_below: float
) -> list[Headline]:
    """The documents' answers, confident and unsure (nothing when the line is off), and "không
    rõ" when either period has answers stored without a confidence."""
    if review_below <= 0:
        return []
    below = f"{round(review_below * 100, 4):g}"
    rows = [
        _share(t, "documents_sure", now, before, part=True),
        _share(
            t,
            "documents_unsure",
            now,
            before,
            label=t("dash.h.documents_unsure", below=below),
            part=True,
        ),
    ]
    if now.documents_unknown or before.documents_unknown:
        rows.append(_share(t, "documents_unknown", now, before, part=True))
    return rows


def headlines(
    t: Translator, now: Figures, before: Figures, review_below: float = REVIEW_BELOW
) -> list[Headline]:
    """The rows of the headline table: figure, this period, the previous one, the change."""
    none = t("dash.h.none")
    rows = [
        Headline(
            "questions",
            str(now.questions),
            str(before.questions),
            _count_change(now.questions, before.questions),
        )
    ]
    rows.append(_share(t, "faq", now, before))
    rows.append(_share(t, "documents", now, before))
    rows += _documents_parts(t, now, before, review_below)
    rows.append(_share(t, "fallback", now, before))

    def votes(f: Figures) -> str:
        if f.thumbs_up is None:
            return none
        return t("dash.h.votes", pct=_percent(f.thumbs_up, none), up=str(f.up), down=str(f.down))

    rows.append(
        Headline("thumbs", votes(now), votes(before), _points(t, now.thumbs_up, before.thumbs_up))
    )
    median_change = (
        none
        if now.median_s is None or before.median_s is None
        else f"{now.median_s - before.median_s:+.1f} s"
    )
    rows.append(
        Headline(
            "median", _seconds(now.median_s, none), _seconds(before.median_s, none), median_change
        )
    )
    rows.append(
        Headline(
            "handed", str(now.handed), str(before.handed), _count_change(now.handed, before.handed)
        )
    )
    return rows
