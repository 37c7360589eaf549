"""The "Cần xem lại" page: answers students marked 👎, asked again right after, that tuvan was
unsure of or could not give (admin.recheck_queue), grouped by meaning, each opening on its detail
(admin.recheck_detail) with what staff can do about it:

- "thêm vào câu hỏi thường gặp": the FAQ editor pre-filled with the question;
- "thêm cách hỏi cho mục #N": the question (edited if need be) added as a phrasing of the FAQ
  entry that answered, or of one staff pick (admin.faq_store.add_variant: embedded at once,
  audited); the answer is then settled;
- "sửa tài liệu": the document it quoted, on the Documents page;
- "đã xem": settled, it leaves the queue (audited, ``settle`` on entity ``answer``).

It replaces the Unanswered page: ``/admin/unanswered`` redirects here with its query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from aiohttp import web
from yarl import URL

from admin.confidence import percent, unsure_sentence
from admin.faq_store import MAX_QUESTION, add_variant, get_entry
from admin.i18n import add_strings
from admin.keys import QUESTION_VECTORS
from admin.period import PERIODS, Period
from admin.question_groups import QuestionGroup, QuestionVectors, group_questions
from admin.readings import sentences
from admin.recheck_detail import answer_detail
from admin.recheck_queue import MAX_ITEMS, SIGNALS, RecheckItem, Signal, queue_items, settle
from admin.web import (
    field,
    form,
    local_path,
    me,
    redirect,
    render,
    requires,
    runtime,
    translator,
    url,
)
from bot.db.models import StaffRole
from bot.runtime import Runtime

MEMBERS_SHOWN = 20

add_strings(
    {
        "recheck.title": ("Cần xem lại", "To look at again"),
        "recheck.intro": (
            "Các câu trả lời học sinh đánh giá 👎, câu hỏi học sinh hỏi lại ngay sau khi nhận "
            "câu trả lời, câu trả lời tuvan không chắc, và câu hỏi trợ lý chưa trả lời được, gom "
            "theo ý nghĩa. Mở từng mục để thêm vào câu hỏi thường gặp, thêm cách hỏi, sửa tài "
            "liệu, hoặc đánh dấu đã xem.",
            "Answers students marked 👎, questions students asked again right after the answer, "
            "answers tuvan was unsure of, and questions the assistant could not answer, grouped "
            "by meaning. Open each to add it to the FAQ, add a phrasing, fix a document, or mark "
            "it seen.",
        ),
        "recheck.all": ("Tất cả ({n})", "All ({n})"),
        "recheck.filter.disliked": ("Bị đánh giá 👎 ({n})", "Marked 👎 ({n})"),
        "recheck.filter.rephrased": ("Bị hỏi lại ({n})", "Asked again ({n})"),
        "recheck.filter.unsure": ("tuvan không chắc ({n})", "tuvan unsure ({n})"),
        "recheck.filter.fallback": ("Chưa trả lời được ({n})", "Not answered ({n})"),
        "recheck.signal.disliked": ("Bị đánh giá 👎", "Marked 👎"),
        "recheck.signal.rephrased": ("Bị hỏi lại", "Asked again"),
        "recheck.signal.unsure": ("tuvan không chắc", "tuvan unsure"),
        "recheck.signal.fallback": ("Chưa trả lời được", "Not answered"),
        "recheck.summary": (
            "{items} câu trả lời cần xem lại trong {groups} nhóm.",
            "{items} answers to look at again in {groups} groups.",
        ),
        "recheck.capped": (
            "Chỉ {n} câu hỏi mới nhất của khoảng thời gian này được xét.",
            "Only the newest {n} questions of this period are considered.",
        ),
        "recheck.empty": (
            "Không còn câu trả lời nào cần xem lại trong khoảng thời gian này.",
            "Nothing to look at again in this period.",
        ),
        "recheck.question": ("Câu hỏi", "Question"),
        "recheck.count": ("Số lần", "Times"),
        "recheck.last_seen": ("Lần cuối", "Last seen"),
        "recheck.more": ("… và {n} câu khác", "… and {n} more"),
        "recheck.open": ("Mở", "Open"),
        "recheck.add_faq": ("Thêm vào câu hỏi thường gặp", "Add to the FAQ"),
        "recheck.settle": ("Đã xem", "Seen"),
        "recheck.settle_group": ("Đã xem cả nhóm", "Mark the group seen"),
        "recheck.back": ("← Quay lại danh sách cần xem lại", "← Back to the list"),
        "recheck.item_title": ("Câu trả lời cần xem lại", "An answer to look at again"),
        "recheck.asked": ("Học sinh hỏi", "The student asked"),
        "recheck.standalone": ("Hiểu thành: {question}", "Read as: {question}"),
        "recheck.asked_at": ("{at} · kênh {channel}", "{at} · channel {channel}"),
        "recheck.open_conversation": ("Xem cả hội thoại", "Open the conversation"),
        "recheck.answer": ("Trợ lý trả lời", "The assistant answered"),
        "recheck.how": ("Cách trả lời", "How it was answered"),
        "recheck.tier.faq": ("Trả lời từ câu hỏi thường gặp #{n}", "Answered from FAQ entry #{n}"),
        "recheck.tier.faq_gone": (
            "Trả lời từ một câu hỏi thường gặp (mục này không còn)",
            "Answered from an FAQ entry (no longer there)",
        ),
        "recheck.tier.documents": (
            "Trả lời bằng trích dẫn từ tài liệu",
            "Answered by quoting the documents",
        ),
        "recheck.tier.fallback": (
            "Chưa trả lời được: không có câu hỏi thường gặp hay đoạn tài liệu nào đủ giống, "
            "trợ lý báo chưa có thông tin chắc chắn",
            "Not answered: no FAQ entry or passage was close enough, the assistant said it had "
            "no reliable information",
        ),
        "recheck.tier.none": (
            "Không phải câu trả lời từ kiến thức",
            "Not an answer from knowledge",
        ),
        "recheck.sources": ("Nguồn", "Sources"),
        "recheck.no_sources": (
            "Câu trả lời này không dẫn nguồn nào.",
            "This answer cites nothing.",
        ),
        "recheck.page": ("trang {page}", "page {page}"),
        "recheck.why": ("Vì sao cần xem lại", "Why it is here"),
        "recheck.why.disliked": (
            "Học sinh đánh giá 👎 lúc {at}.",
            "The student marked it 👎 at {at}.",
        ),
        "recheck.why.rephrased": (
            "{seconds} giây sau câu trả lời, học sinh hỏi lại: “{text}”",
            "{seconds} seconds after the answer, the student asked again: “{text}”",
        ),
        "recheck.why.fallback": (
            "Trợ lý chưa trả lời được câu hỏi này.",
            "The assistant could not answer this question.",
        ),
        "recheck.why.none": (
            "Không có tín hiệu nào: câu trả lời này không nằm trong danh sách.",
            "No signal: this answer is not in the list.",
        ),
        "recheck.settled_by": ("Đã xem: {who}, lúc {at}.", "Seen by {who} at {at}."),
        "recheck.actions": ("Việc có thể làm", "What you can do"),
        "recheck.variant_label": ("Cách hỏi sẽ thêm", "The phrasing to add"),
        "recheck.add_variant": ("Thêm cách hỏi cho mục #{n}", "Add as a phrasing of entry #{n}"),
        "recheck.other_entries": (
            "Hoặc thêm vào một mục gần nghĩa:",
            "Or add it to an entry close in meaning:",
        ),
        "recheck.other_number": ("Số của mục khác", "Another entry's number"),
        "recheck.add_variant_other": ("Thêm vào mục này", "Add to this entry"),
        "recheck.variant_error": (
            "Chưa thêm được: hãy nhập cách hỏi và chọn một mục có thật, chưa có cách hỏi này.",
            "Not added: write the phrasing and pick an existing entry that does not have it.",
        ),
        "recheck.edit_faq": ("Sửa câu trả lời của mục #{n}", "Edit the answer of entry #{n}"),
        "recheck.edit_document": ("Sửa tài liệu “{title}”", "Fix the document “{title}”"),
        "recheck.settle_help": (
            "Đánh dấu đã xem khi không cần làm gì thêm: câu trả lời rời khỏi danh sách.",
            "Mark it seen when nothing more is needed: it leaves the list.",
        ),
        "recheck.tech": ("Chi tiết kỹ thuật", "Technical details"),
        "recheck.tech.reason": ("Ghi chú của bộ trả lời", "The answerer's note"),
        "recheck.tech.scores": ("Điểm số", "Scores"),
        "recheck.tech.reading": ("Cách đọc (dữ liệu)", "Reading (data)"),
        "msg.settled": ("Đã đánh dấu đã xem.", "Marked as seen."),
    }
)


@dataclass(frozen=True)
class RecheckReport:
    groups: list[QuestionGroup[RecheckItem]]
    items: int  # shown (after the signal filter)
    total: int  # before the filter
    counts: dict[Signal, int]  # items of each signal, before the filter
    capped: bool


async def recheck_report(
    rt: Runtime, vectors: QuestionVectors, period: Period, signal: Signal | None = None
) -> RecheckReport:
    """The period's queue grouped by meaning, the biggest group first (the page and the
    dashboard's top groups)."""
    async with rt.sessionmaker() as session:
        items, capped = await queue_items(
            session, period, rt.parts.processor, review_below=rt.settings.admin.review_below
        )
    counts = {s: sum(1 for i in items if s in i.signals) for s in SIGNALS}
    shown = [i for i in items if signal is None or signal in i.signals]
    groups = await group_questions(shown, vectors, rt.parts.embedder, rt.parts.processor)
    return RecheckReport(groups, len(shown), len(items), counts, capped)


def faq_link(request: web.Request, question: str) -> str | None:
    """The FAQ editor pre-filled with ``question``, for those who may create entries."""
    if not me(request).may(StaffRole.editor):
        return None
    if "admin.faq_new" not in request.app.router.named_resources():
        return None  # no FAQ editor mounted
    return url(request, "admin.faq_new", {"question": question})


def _signal(value: str | None) -> Signal | None:
    return value if value in get_args(Signal) else None  # type: ignore[return-value]


async def recheck_page(request: web.Request) -> web.Response:
    period = Period.from_query(request.query)
    signal = _signal(request.query.get("signal"))
    report = await recheck_report(
        runtime(request), request.config_dict[QUESTION_VECTORS], period, signal
    )
    return await render(
        request,
        "recheck.html",
        {
            "report": report,
            "period": period,
            "periods": PERIODS,
            "signal": signal or "",
            "signals": SIGNALS,
            "members_shown": MEMBERS_SHOWN,
            "max_items": MAX_ITEMS,
            "percent": percent,
            "faq_link": lambda question: faq_link(request, question),
            "can_edit": me(request).may(StaffRole.editor),
        },
    )


def _message_id(request: web.Request) -> int:
    found = _id(request.match_info["message_id"])
    if not found:
        raise web.HTTPNotFound()  # no answer has that id (nor one past BIGINT)
    return found


async def item_page(request: web.Request) -> web.Response:
    detail = await answer_detail(
        runtime(request), request.config_dict[QUESTION_VECTORS], _message_id(request)
    )
    if detail is None:
        raise web.HTTPNotFound()
    back = local_path(request.query.get("back"), url(request, "admin.recheck"))
    t = translator(request)
    confidence = detail.item.confidence
    return await render(
        request,
        "recheck_item.html",
        {
            "d": detail,
            "reading": sentences(t, detail.reading, detail.item.asked),
            "unsure": (
                unsure_sentence(t, confidence, runtime(request).settings.admin.review_below)
                if confidence is not None
                else ""
            ),
            "confidence_pct": percent(confidence) if confidence is not None else None,
            "back": back,
            "faq_link": lambda question: faq_link(request, question),
            "can_edit": me(request).may(StaffRole.editor),
            "max_question": MAX_QUESTION,
            "variant_error": request.query.get("error", "") == "variant",
        },
    )


def _id(value: str) -> int:
    """A row id sent in a form, 0 when it is none (ids are positive BIGINTs)."""
    value = value.strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) < 19 else 0


def _settled(request: web.Request, target: str) -> str:
    """Back where staff came from (an /admin path only), saying it is done."""
    back = URL(local_path(target, url(request, "admin.recheck")))
    return str(back.with_query({**back.query, "msg": "settled"}))


@requires(StaffRole.editor)
async def settle_one(request: web.Request) -> web.Response:
    data = await form(request)
    message_id = _message_id(request)
    async with runtime(request).sessionmaker.begin() as session:
        if not await settle(session, [message_id], me(request).email):
            raise web.HTTPNotFound()
    raise web.HTTPSeeOther(_settled(request, field(data, "next", 2000)))


@requires(StaffRole.editor)
async def settle_many(request: web.Request) -> web.Response:
    data = await form(request)
    ids = [_id(v) for v in data.getall("id", []) if isinstance(v, str)]
    ids = [i for i in ids if i]
    if not ids:
        raise web.HTTPBadRequest(text="no answer named")
    async with runtime(request).sessionmaker.begin() as session:
        await settle(session, ids, me(request).email)
    raise web.HTTPSeeOther(_settled(request, field(data, "next", 2000)))


@requires(StaffRole.editor)
async def add_phrasing(request: web.Request) -> web.Response:
    """The question as a phrasing of the chosen FAQ entry; the answer is then settled."""
    data = await form(request)
    message_id = _message_id(request)
    choice = field(data, "faq_id", 20)
    faq_id = _id(field(data, "other_faq_id", 20) if choice == "other" else choice)
    phrasing = field(data, "variant", MAX_QUESTION)
    rt = runtime(request)
    added = False
    async with rt.sessionmaker.begin() as session:
        entry = await get_entry(session, faq_id) if faq_id else None
        if entry is not None and phrasing:
            added = await add_variant(session, rt.indexer, entry, phrasing, me(request).email)
            if added and not await settle(session, [message_id], me(request).email):
                raise web.HTTPNotFound()
    if not added:  # no such entry, an empty phrasing, or one the entry already has
        redirect(request, "admin.recheck_item", {"error": "variant"}, message_id=message_id)
    redirect(request, "admin.recheck_item", {"msg": "variant_added"}, message_id=message_id)


async def to_recheck(request: web.Request) -> web.Response:
    """The old Unanswered page's address: its period and filters carry over."""
    raise web.HTTPMovedPermanently(url(request, "admin.recheck", dict(request.query)))


def setup(app: web.Application) -> None:
    app[QUESTION_VECTORS] = QuestionVectors()
    r = app.router
    r.add_get("/recheck", recheck_page, name="admin.recheck")
    r.add_post("/recheck/settle", settle_many, name="admin.recheck_settle_many")
    r.add_get(r"/recheck/{message_id:\d+}", item_page, name="admin.recheck_item")
    r.add_post(r"/recheck/{message_id:\d+}/settle", settle_one, name="admin.recheck_settle")
    r.add_post(r"/recheck/{message_id:\d+}/variant", add_phrasing, name="admin.recheck_variant")
    r.add_get("/unanswered", to_recheck, name="admin.unanswered")
