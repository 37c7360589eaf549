"""The Unanswered page: what students asked that tuvan could not answer well, grouped.

A question counts when its reply was the fallback, or passed its threshold only narrowly: tier 2
with its best chunk below ``t_doc + margin``, tier 1 with its FAQ similarity below
``t_faq + margin`` (``TUVAN_ADMIN__LOW_CONFIDENCE_MARGIN``). The thresholds are those stored
with each reply (the ones in force when it was answered), else today's. The newest
``MAX_QUESTIONS`` of the period are grouped by meaning (admin.question_groups); each group
links to the FAQ editor pre-filled with its most-asked phrasing.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from admin.i18n import add_strings
from admin.keys import QUESTION_VECTORS
from admin.period import PERIODS, Period
from admin.question_groups import Asked, QuestionGroup, QuestionVectors, group_questions
from admin.web import me, render, runtime, url
from bot.db.models import StaffRole
from bot.runtime import Runtime
from retrieval.thresholds import Thresholds

MAX_QUESTIONS = 2000  # the newest of the period; grouping embeds each new phrasing once
MEMBERS_SHOWN = 20

add_strings(
    {
        "unans.title": ("Câu hỏi chưa trả lời được", "Unanswered questions"),
        "unans.intro": (
            "Câu hỏi chưa trả lời được (trợ lý không tìm thấy thông tin), hoặc được trả lời "
            "với độ tin cậy thấp (điểm chỉ vừa qua ngưỡng), gom theo ý nghĩa. Thêm một mục FAQ "
            "cho nhóm lớn nhất trước.",
            "Questions that got the fallback, or an answer whose score only just passed its "
            "threshold, grouped by meaning. Add an FAQ entry for the biggest groups first.",
        ),
        "unans.criteria": (
            "Ngưỡng hiện tại: FAQ {t_faq}, tài liệu {t_doc}; biên độ tin cậy thấp {margin}.",
            "Thresholds now: FAQ {t_faq}, documents {t_doc}; low-confidence margin {margin}.",
        ),
        "unans.summary": (
            "{questions} câu hỏi trong {groups} nhóm.",
            "{questions} questions in {groups} groups.",
        ),
        "unans.capped": (
            "Chỉ {n} câu hỏi mới nhất của khoảng thời gian này được xét.",
            "Only the newest {n} questions of this period are considered.",
        ),
        "unans.empty": (
            "Không có câu hỏi nào chưa trả lời được trong khoảng thời gian này.",
            "No unanswered question in this period.",
        ),
        "unans.count": ("Số lần hỏi", "Times asked"),
        "unans.last_seen": ("Lần cuối", "Last seen"),
        "unans.question": ("Câu hỏi", "Question"),
        "unans.members": ("Các câu hỏi trong nhóm ({n})", "Questions in this group ({n})"),
        "unans.more": ("… và {n} câu khác", "… and {n} more"),
        "unans.create_faq": ("Tạo mục FAQ", "Create an FAQ entry"),
        "unans.open_conversation": ("Xem hội thoại", "Open the conversation"),
        "unans.tier.fallback": ("chưa trả lời được", "not answered"),
        "unans.tier.documents": ("tài liệu, tin cậy thấp", "documents, low confidence"),
        "unans.tier.faq": ("FAQ, tin cậy thấp", "FAQ, low confidence"),
        "period.label": ("Khoảng thời gian", "Period"),
        "period.days": ("{n} ngày", "{n} days"),
        "period.end": ("Đến ngày", "Up to"),
        "period.show": ("Xem", "Show"),
        "period.range": ("Từ {first} đến {end} (UTC)", "From {first} to {end} (UTC)"),
    }
)

# Driven by the replies of the period (created_at is indexed; a reply is never older than its
# question), each joined to its question by primary key; DISTINCT ON keeps one reply per
# question should there ever be two. From each reply's ``details.scores``: the FAQ similarity
# (tier 1), the best chunk similarity (tier 2: ``chunks``, else ``doc_best``) and the
# thresholds in force when it was answered; anything not a number reads as NULL.
_UNANSWERED = text(
    """
    WITH r AS (
        SELECT m.reply_to_id, m.tier, m.details ->> 'reason' AS reason,
               CASE WHEN jsonb_typeof(s -> 'faq') = 'number'
                    THEN (s ->> 'faq')::float8 END AS faq,
               coalesce(
                   (SELECT max((c ->> 'similarity')::float8)
                    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(s -> 'chunks') = 'array'
                                                   THEN s -> 'chunks' ELSE '[]'::jsonb END) AS c
                    WHERE jsonb_typeof(c -> 'similarity') = 'number'),
                   CASE WHEN jsonb_typeof(s -> 'doc_best') = 'number'
                        THEN (s ->> 'doc_best')::float8 END) AS best,
               CASE WHEN jsonb_typeof(s -> 't_faq') = 'number'
                    THEN (s ->> 't_faq')::float8 END AS t_faq,
               CASE WHEN jsonb_typeof(s -> 't_doc') = 'number'
                    THEN (s ->> 't_doc')::float8 END AS t_doc
        FROM messages m
        CROSS JOIN LATERAL (SELECT CASE WHEN jsonb_typeof(m.details -> 'scores') = 'object'
                                        THEN m.details -> 'scores' ELSE '{}'::jsonb END AS s) AS x
        WHERE m.direction = 'out' AND m.author = 'bot' AND m.reply_to_id IS NOT NULL
          AND m.created_at >= :since
    ), found AS (
        SELECT DISTINCT ON (q.id)
               q.id, coalesce(q.question, q.text) AS question, q.created_at AS at, q.channel,
               q.conversation_id, r.tier, r.reason,
               CASE WHEN r.tier = 'faq' THEN r.faq ELSE r.best END AS score
        FROM r JOIN messages q ON q.id = r.reply_to_id
        WHERE q.direction = 'in' AND q.kind = 'text'
          AND q.created_at >= :since AND q.created_at < :until
          AND (r.tier = 'fallback'
               OR (r.tier = 'documents' AND r.best < coalesce(r.t_doc, :t_doc) + :margin)
               OR (r.tier = 'faq' AND r.faq < coalesce(r.t_faq, :t_faq) + :margin))
        ORDER BY q.id
    )
    SELECT * FROM found ORDER BY at DESC, id DESC LIMIT :limit
    """
)


async def unanswered_questions(
    session: AsyncSession,
    period: Period,
    thresholds: Thresholds,
    margin: float,
    limit: int = MAX_QUESTIONS,
) -> list[Asked]:
    """The period's questions answered by the fallback or with low confidence, newest first."""
    rows = await session.execute(
        _UNANSWERED,
        {
            "since": period.since,
            "until": period.until,
            "t_doc": thresholds.t_doc,
            "t_faq": thresholds.t_faq,
            "margin": margin,
            "limit": limit,
        },
    )
    return [
        Asked(
            id=r.id,
            question=r.question,
            at=r.at,
            channel=r.channel,
            conversation_id=r.conversation_id,
            tier=r.tier,
            score=r.score,
            reason=r.reason or "",
        )
        for r in rows
    ]


@dataclass(frozen=True)
class UnansweredReport:
    groups: list[QuestionGroup]
    questions: int
    capped: bool
    thresholds: Thresholds
    margin: float


async def unanswered_report(
    rt: Runtime, vectors: QuestionVectors, period: Period
) -> UnansweredReport:
    """The period's unanswered questions, grouped (what the page and the dashboard show)."""
    margin = rt.settings.admin.low_confidence_margin
    async with rt.sessionmaker() as session:
        thresholds = await rt.answerer.thresholds(session)
        asked = await unanswered_questions(session, period, thresholds, margin)
    groups = await group_questions(asked, vectors, rt.parts.embedder, rt.parts.processor)
    return UnansweredReport(groups, len(asked), len(asked) >= MAX_QUESTIONS, thresholds, margin)


def faq_link(request: web.Request, question: str) -> str | None:
    """The FAQ editor pre-filled with ``question``, for those who may create entries."""
    if not me(request).may(StaffRole.editor):
        return None
    if "admin.faq_new" not in request.app.router.named_resources():
        return None  # no FAQ editor mounted
    return url(request, "admin.faq_new", {"question": question})


async def unanswered_page(request: web.Request) -> web.Response:
    period = Period.from_query(request.query)
    report = await unanswered_report(
        runtime(request), request.config_dict[QUESTION_VECTORS], period
    )
    return await render(
        request,
        "unanswered.html",
        {
            "report": report,
            "period": period,
            "periods": PERIODS,
            "members_shown": MEMBERS_SHOWN,
            "max_questions": MAX_QUESTIONS,
            "faq_link": lambda question: faq_link(request, question),
        },
    )


def setup(app: web.Application) -> None:
    app[QUESTION_VECTORS] = QuestionVectors()
    app.router.add_get("/unanswered", unanswered_page, name="admin.unanswered")
