"""The Conversations pages: the list, a transcript, and taking a conversation over.

Viewers read; editors take a conversation over (the bot stays quiet in it), reply (queued like
the bot's replies and delivered by the worker through the channel's adapter, stored as a staff
message) and hand it back. A reply in a conversation the bot still answers takes it over too:
otherwise the bot would answer the student's next message over the person's head.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from admin import audit
from admin.attention import mark_handled
from admin.confidence import confidence_of
from admin.conversation_store import (
    ConversationFilters,
    Line,
    list_conversations,
    transcript,
)
from admin.explanations import explain_error, explain_reply
from admin.i18n import add_strings
from admin.readings import parse_reading, sentences
from admin.reply_view import ReplyView, SourceLink, faq_id_of, faq_questions, reply_view
from admin.web import (
    PAGE_SIZE,
    field,
    form,
    me,
    redirect,
    render,
    requires,
    runtime,
    translator,
)
from bot.conversations.store import queue_staff_reply, set_mode
from bot.core.types import CHANNELS
from bot.db.models import Conversation, ConversationMode, StaffRole

MAX_REPLY = 4000  # Telegram's limit is 4096; longer replies are better split by the writer

add_strings(
    {
        "conv.title": ("Hội thoại", "Conversations"),
        "conv.intro": (
            "Mọi hội thoại trên các kênh. Tiếp quản để tự trả lời: trợ lý im lặng cho tới khi "
            "bạn trả lại.",
            "Every conversation on every channel. Take one over to answer yourself: the "
            "assistant stays quiet until you hand it back.",
        ),
        "conv.channel": ("Kênh", "Channel"),
        "conv.mode": ("Trạng thái", "Status"),
        "conv.mode.bot": ("trợ lý trả lời", "bot answers"),
        "conv.mode.human": ("nhân viên tiếp quản", "staff took over"),
        "conv.waiting": ("cần xử lý", "needs attention"),
        "conv.waiting_help": (
            "Cần nhân viên: hết đánh dấu khi nhân viên trả lời hoặc bấm “Đã xử lý”.",
            "Needs staff: cleared when staff reply or press “Handled”.",
        ),
        "conv.reason.waiting": ("muốn gặp cán bộ tư vấn", "asked for a person"),
        "conv.reason.flagged": ("chê một câu trả lời (👎)", "marked an answer 👎"),
        "conv.attention_count": (
            "{n} hội thoại cần xử lý",
            "{n} conversations need attention",
        ),
        "conv.handled": ("Đã xử lý", "Handled"),
        "conv.handled_help": (
            "Bỏ đánh dấu “cần xử lý” mà không cần trả lời (ví dụ đã gọi điện cho người hỏi).",
            "Clear “needs attention” without replying (e.g. you phoned the student).",
        ),
        "msg.handled": ("Đã đánh dấu là đã xử lý.", "Marked as handled."),
        "conv.named_by_question": (
            "{channel} · “{question}” · {at}",
            "{channel} · “{question}” · {at}",
        ),
        "conv.named_by_time": ("{channel} · {at}", "{channel} · {at}"),
        "conv.channel_name.web": ("Khách web", "Web visitor"),
        "conv.channel_name.telegram": ("Telegram", "Telegram"),
        "conv.channel_name.messenger": ("Messenger", "Messenger"),
        "conv.channel_name.zalo": ("Zalo", "Zalo"),
        "conv.from": ("Từ ngày", "From"),
        "conv.to": ("Đến ngày", "To"),
        "conv.search": ("Tìm trong tin nhắn", "Search the messages"),
        "conv.contact": ("Người hỏi", "Contact"),
        "conv.last": ("Tin nhắn cuối", "Last message"),
        "conv.message": ("Tin nhắn", "Message"),
        "conv.activity": ("Hoạt động cuối", "Last activity"),
        "conv.empty": ("Không có hội thoại nào khớp.", "No conversation matches."),
        "conv.unnamed": ("(không tên)", "(no name)"),
        "conv.web_visitor": ("Khách web · {tag}", "Web visitor · {tag}"),
        "conv.transcript": ("Hội thoại #{id}", "Conversation #{id}"),
        "conv.back": ("Về danh sách", "Back to the list"),
        "conv.older": ("Tin nhắn cũ hơn", "Older messages"),
        "conv.newest": ("Tin nhắn mới nhất", "Newest messages"),
        "conv.refresh": ("Tải lại", "Refresh"),
        "conv.no_messages": ("Chưa có tin nhắn.", "No message yet."),
        "conv.author.user": ("Người hỏi", "Student"),
        "conv.author.bot": ("Trợ lý", "Assistant"),
        "conv.author.staff": ("Nhân viên", "Staff"),
        "conv.tier.faq": ("Câu hỏi thường gặp", "FAQ"),
        "conv.tier.documents": ("Tài liệu", "Documents"),
        "conv.tier.fallback": ("Chưa trả lời được", "Not answered"),
        "conv.standalone": ("Hiểu là: {question}", "Read as: {question}"),
        "conv.page": ("trang {page}", "page {page}"),
        "conv.status.received": ("đang chờ", "waiting"),
        "conv.status.answering": ("đang trả lời", "being answered"),
        "conv.status.answered": ("đã trả lời", "answered"),
        "conv.status.skipped": ("trợ lý không trả lời", "not answered by the bot"),
        "conv.status.queued": ("chờ gửi", "queued"),
        "conv.status.sending": ("đang gửi", "sending"),
        "conv.status.sent": ("đã gửi", "sent"),
        "conv.status.undeliverable": ("không gửi được", "undeliverable"),
        "conv.status.failed": ("lỗi", "failed"),
        "conv.failed.in": (
            "Không trả lời được sau {n} lần thử",
            "Could not be answered after {n} tries",
        ),
        "conv.failed.out": ("Không gửi được sau {n} lần thử", "Could not be sent after {n} tries"),
        "conv.take_over": ("Tiếp quản", "Take over"),
        "conv.hand_back": ("Trả lại cho trợ lý", "Hand back to the bot"),
        "conv.reply": ("Trả lời", "Reply"),
        "conv.reply_label": ("Tin nhắn gửi người hỏi", "Message to the student"),
        "conv.reply_help": (
            "Gửi qua kênh của người hỏi. Trả lời cũng là tiếp quản: trợ lý im lặng cho tới "
            "khi bạn trả lại.",
            "Sent through the student's channel. Replying also takes the conversation over: "
            "the assistant stays quiet until you hand it back.",
        ),
        "conv.reply_empty": ("Tin nhắn trống.", "The message is empty."),
        "conv.reply_too_long": (
            "Tin nhắn quá dài (tối đa 4000 ký tự).",
            "The message is too long (4000 characters at most).",
        ),
        "conv.human_note": (
            "Nhân viên đang tiếp quản: trợ lý không trả lời trong hội thoại này.",
            "Staff took over: the assistant does not answer in this conversation.",
        ),
        "msg.taken_over": ("Đã tiếp quản hội thoại.", "You took the conversation over."),
        "msg.handed_back": ("Trợ lý trả lời lại từ bây giờ.", "The bot answers again from now."),
        "msg.reply_queued": (
            "Đã xếp hàng gửi; trạng thái hiện bên dưới.",
            "Queued for delivery; its status shows below.",
        ),
    }
)


def _conversation_id(request: web.Request) -> int:
    return int(request.match_info["conversation_id"])


def _entry(line: Line) -> int | None:
    return faq_id_of(line.tier, line.details) if line.author == "bot" else None


async def conversations_page(request: web.Request) -> web.Response:
    filters = ConversationFilters.from_query(request.query)
    async with runtime(request).sessionmaker() as session:
        rows, total = await list_conversations(session, filters, PAGE_SIZE)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    return await render(
        request,
        "conversations.html",
        {
            "rows": rows,
            "total": total,
            "page": min(filters.page, pages),  # past the end: the last page was shown
            "pages": pages,
            "filters": filters,
            "channels": CHANNELS,
            "modes": list(ConversationMode),
            "page_query": lambda page: urlencode(filters.query(page=page)),
        },
    )


async def _transcript_page(
    request: web.Request, *, reply_error: str = "", reply_text: str = "", status: int = 200
) -> web.Response:
    before = request.query.get("before", "")
    async with runtime(request).sessionmaker() as session:
        found = await transcript(
            session, _conversation_id(request), int(before) if before.isdigit() else None
        )
        # the question of each FAQ entry that answered, to name it where it is linked
        lines = found.lines if found is not None else []
        entries = await faq_questions(session, filter(None, map(_entry, lines)))
    if found is None:
        raise web.HTTPNotFound()
    t = translator(request)
    explained = {
        line.id: explain_reply(t, line.tier, line.details, line.score, line.threshold)
        for line in found.lines
        if line.author == "bot" and line.details
    }
    errors = {line.id: explain_error(t, line.error) for line in found.lines if line.error}
    # How each question was read, said under its reply (the question's own "Hiểu là" line then
    # goes: the reading names the question answered when it differs from the message).
    texts = {line.id: line.text for line in found.lines if line.author == "user"}
    readings: dict[int, list[str]] = {}
    views: dict[int, ReplyView] = {}
    review_below = runtime(request).settings.admin.review_below
    for line in found.lines:
        reading = parse_reading(line.details.get("reading"))
        if reading is not None:
            readings[line.id] = sentences(t, reading, texts.get(line.reply_to or 0))
        if line.author == "bot":
            entry = _entry(line)
            views[line.id] = reply_view(
                t,
                line.text,
                line.tier,
                confidence_of(line.details),
                review_below,
                entry=None if entry is None else (entry, entries.get(entry)),
                cited=[SourceLink(c.title, c.href, c.page, n=c.n) for c in line.citations],
            )
    read = {line.reply_to for line in found.lines if line.id in readings}
    return await render(
        request,
        "conversation.html",
        {
            "tr": found,
            "explained": explained,
            "errors": errors,
            "readings": readings,
            "read": read,
            "views": views,
            "older_page": before.isdigit(),
            "human": found.conversation.mode == ConversationMode.human,
            "can_edit": me(request).may(StaffRole.editor),
            "reply_error": reply_error,
            "reply_text": reply_text,
            "max_reply": MAX_REPLY,
        },
        status=status,
    )


async def conversation_page(request: web.Request) -> web.Response:
    return await _transcript_page(request)


async def _switch(
    session: Any, request: web.Request, conversation: Conversation, mode: ConversationMode
) -> None:
    """Set the mode (audited) unless it is already that."""
    if conversation.mode == mode:
        return
    before = {"mode": conversation.mode.value}
    await set_mode(session, conversation.id, mode)
    action = "take_over" if mode == ConversationMode.human else "hand_back"
    await audit.record(
        session,
        me(request).email,
        action,
        "conversation",
        conversation.id,
        before,
        {"mode": mode.value},
    )


async def _change_mode(request: web.Request, mode: ConversationMode, msg: str) -> web.Response:
    async with runtime(request).sessionmaker.begin() as session:
        conversation = await session.get(Conversation, _conversation_id(request))
        if conversation is None:
            raise web.HTTPNotFound()
        await _switch(session, request, conversation, mode)
    redirect(request, "admin.conversations_view", {"msg": msg}, conversation_id=conversation.id)


@requires(StaffRole.editor)
async def take_over(request: web.Request) -> web.Response:
    return await _change_mode(request, ConversationMode.human, "taken_over")


@requires(StaffRole.editor)
async def hand_back(request: web.Request) -> web.Response:
    return await _change_mode(request, ConversationMode.bot, "handed_back")


@requires(StaffRole.editor)
async def handled(request: web.Request) -> web.Response:
    """ "Đã xử lý": the conversation no longer needs staff (audited, with what was set)."""
    async with runtime(request).sessionmaker.begin() as session:
        conversation_id = _conversation_id(request)
        before = await mark_handled(session, conversation_id)
        if before is None:
            raise web.HTTPNotFound()
        await audit.record(
            session,
            me(request).email,
            "handled",
            "conversation",
            conversation_id,
            before,
            {"waiting_since": None, "flagged_since": None},
        )
    redirect(
        request, "admin.conversations_view", {"msg": "handled"}, conversation_id=conversation_id
    )


@requires(StaffRole.editor)
async def reply(request: web.Request) -> web.Response:
    data = await form(request)
    text = field(data, "text", MAX_REPLY + 1)
    if not text:
        return await _transcript_page(request, reply_error="conv.reply_empty", status=400)
    if len(text) > MAX_REPLY:
        return await _transcript_page(
            request, reply_error="conv.reply_too_long", reply_text=text, status=400
        )
    staff = me(request).email
    async with runtime(request).sessionmaker.begin() as session:
        conversation = await session.get(Conversation, _conversation_id(request))
        if conversation is None:
            raise web.HTTPNotFound()
        await _switch(session, request, conversation, ConversationMode.human)
        message_id = await queue_staff_reply(session, conversation.id, text, staff)
        await audit.record(
            session,
            staff,
            "reply",
            "conversation",
            conversation.id,
            None,
            {"message_id": message_id, "text": text},
        )
    redirect(
        request,
        "admin.conversations_view",
        {"msg": "reply_queued"},
        conversation_id=conversation.id,
    )


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/conversations", conversations_page, name="admin.conversations")
    r.add_get(
        r"/conversations/{conversation_id:\d+}", conversation_page, name="admin.conversations_view"
    )
    r.add_post(
        r"/conversations/{conversation_id:\d+}/take-over",
        take_over,
        name="admin.conversations_take_over",
    )
    r.add_post(
        r"/conversations/{conversation_id:\d+}/reply", reply, name="admin.conversations_reply"
    )
    r.add_post(
        r"/conversations/{conversation_id:\d+}/handled",
        handled,
        name="admin.conversations_handled",
    )
    r.add_post(
        r"/conversations/{conversation_id:\d+}/hand-back",
        hand_back,
        name="admin.conversations_hand_back",
    )
