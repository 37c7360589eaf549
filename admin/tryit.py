""" "Try it": ask a question as a student would and see why tuvan answers the way it does.

Runs the real answerer (nothing is stored) and lays it out as the conversation view does
(admin.reply_view): the reply as the student reads it (its Markdown rendered), why it is what it
is in plain words (admin.explanations), where it came from (the FAQ entry, the documents' titles
and addresses), how sure tuvan was, and how the question was read (admin.readings). The rest is
folded under "Chi tiết kỹ thuật": the tier, how the nearest FAQ entries were weighed and what
became of each, the passages found (their Markdown rendered too: a table is a table), and the
figures (similarities, thresholds, ranks, the confidence, time).

An earlier question (``?prev=``) tries a follow-up: the question is made standalone with it by
bot.answer.followup.standalone_question, as the worker and the web chat do, then answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web
from markupsafe import Markup

from admin.answer_markup import excerpt_html
from admin.explanations import Explanation, explain_reply, step_sentences
from admin.i18n import Translator, add_strings
from admin.readings import Reading, parse_reading, sentences, with_said
from admin.reply_view import ReplyView, SourceLink, reply_view
from admin.web import render, runtime, translator
from bot.answer.conversation import said_of
from bot.answer.followup import Turn
from bot.answer.question import MAX_QUESTION_CHARS
from bot.answer.replies import Answer
from bot.answer.why import faq_step
from bot.core.citations import citation_label, public_url
from bot.runtime import Runtime
from retrieval.faq.decision import CandidateVerdict
from retrieval.search.hits import Hit

add_strings(
    {
        "try.title": ("Thử hỏi", "Try it"),
        "try.intro": (
            "Đặt câu hỏi như người học; xem tầng nào trả lời và vì sao. Không có gì được lưu.",
            "Ask as a student would; see which tier answers and why. Nothing is stored.",
        ),
        "try.question": ("Câu hỏi", "Question"),
        "try.earlier": ("Câu hỏi trước (không bắt buộc)", "An earlier question (optional)"),
        "try.earlier_help": (
            "Để thử một câu hỏi tiếp theo, như “ngành đó học phí bao nhiêu”.",
            "To try a follow-up, such as “what does that major cost”.",
        ),
        "try.reading_label": ("Cách đọc", "Reading"),
        "try.unsure_note": (
            "Câu trả lời như vậy sẽ vào “Cần xem lại”.",
            "Such an answer goes to “To look at again”.",
        ),
        "try.ask": ("Hỏi", "Ask"),
        "try.reply": ("Câu trả lời", "Reply"),
        "try.tier": ("Tầng trả lời: {tier}", "Answered by: {tier}"),
        "try.tier.faq": ("1 · câu hỏi thường gặp (nguyên văn)", "1 · FAQ (word for word)"),
        "try.tier.documents": ("2 · tài liệu (có trích dẫn)", "2 · documents (cited)"),
        "try.tier.fallback": ("chưa trả lời được", "not answered"),
        "try.reason": ("Vì sao: {reason}", "Why: {reason}"),
        "try.thresholds": (
            "Ngưỡng: độ tin cậy câu hỏi thường gặp = {t_faq}, t_doc = {t_doc} ({origin})",
            "Thresholds: FAQ confidence = {t_faq}, t_doc = {t_doc} ({origin})",
        ),
        "try.timing": ("Thời gian: {ms} ms", "Time: {ms} ms"),
        "try.faq_matches": ("Câu hỏi thường gặp gần nhất", "Nearest FAQ entries"),
        "try.faq_none": ("Không có mục đã xuất bản nào.", "No published entry."),
        "try.matched": ("Khớp với", "Matched text"),
        "try.similarity": ("Độ tương đồng", "Similarity"),
        "try.verdict": ("Kết luận", "Verdict"),
        "try.accepted": ("được chọn", "accepted"),
        "try.refused": ("không chọn", "not taken"),
        "try.chunks": ("Đoạn tài liệu tìm được", "Retrieved passages"),
        "try.chunks_none": (
            "Không tìm tài liệu (câu hỏi thường gặp đã trả lời) hoặc không có đoạn nào.",
            "No document search (the FAQ answered) or no passage found.",
        ),
        "try.passage": ("Đoạn", "Passage"),
        "try.score": ("Điểm xếp hạng", "Rank score"),
        "try.ranks": ("Hạng (vector / từ khoá)", "Rank (vector / keyword)"),
        "try.used": ("Dùng", "Used"),
        "try.terms": ("Từ khoá tìm kiếm: {terms}", "Search terms: {terms}"),
        "try.restored": (
            "Câu hỏi gõ không dấu, được hiểu là: {text}",
            "Typed without diacritics, read as: {text}",
        ),
        "try.parts": (
            "Câu hỏi có {n} ý, mỗi ý được tìm riêng: {parts}",
            "The question asks {n} things, each searched on its own: {parts}",
        ),
    }
)


@dataclass(frozen=True)
class Weighed:
    """One FAQ entry tier 1 read: the entry, whether it was taken, and why, in words."""

    verdict: CandidateVerdict
    sentences: list[str]


EXCERPT_CHARS = 400  # of a passage found; its whole lines, so a table stays one


@dataclass(frozen=True)
class Passage:
    """One passage found: the hit, its source as staff may see it, whether tier 2 used it, and
    the start of its text rendered."""

    hit: Hit
    label: str
    href: str | None
    used: bool
    excerpt: Markup


@dataclass(frozen=True)
class Explained:
    """What the template shows, taken from an answer and its trace (absent parts are empty)."""

    answer: Answer
    view: ReplyView
    why: Explanation
    weighed: list[Weighed]
    passages: list[Passage]
    thresholds: Any
    faq_threshold: float
    terms: list[str]
    restored: str | None
    parts: list[str]
    reading: list[str]  # how the question was read, in words


def explain(
    answer: Answer,
    t: Translator,
    reading: Reading,
    asked: str,
    review_below: float,
) -> Explained:
    """``answer`` laid out; ``reading`` is how ``asked`` (what staff typed) was read."""
    trace = answer.trace
    decision = trace.get("faq")
    thresholds = trace.get("thresholds")
    t_faq = decision.threshold if decision is not None else 1.0
    passing = {h.chunk_id for h in trace.get("passing") or []}
    details = {
        "why": answer.why,
        "reason": answer.reason,
        "timings_ms": answer.timings_ms,
        "confidence": answer.confidence,
    }
    verdicts = decision.verdicts if decision is not None else ()
    entry = None
    if answer.tier == "faq" and answer.faq_id is not None:
        named = (v.candidate.question for v in verdicts if v.candidate.faq_id == answer.faq_id)
        entry = (answer.faq_id, next(named, None))
    view = reply_view(
        t,
        answer.answer,
        answer.tier,
        answer.confidence,
        review_below,
        entry=entry,
        cited=[
            SourceLink(citation_label(c.title, c.source), public_url(c.url), c.page, n=c.n)
            for c in answer.citations
        ],
    )
    return Explained(
        answer=answer,
        view=view,
        why=explain_reply(t, answer.tier, details),
        weighed=[Weighed(v, step_sentences(t, faq_step(v, t_faq))) for v in verdicts],
        passages=[
            Passage(
                h,
                citation_label(h.title, h.source),
                public_url(h.url),
                h.chunk_id in passing,
                excerpt_html(h.text, EXCERPT_CHARS),
            )
            for h in trace.get("hits") or []
        ],
        thresholds=thresholds,
        faq_threshold=t_faq,
        terms=list(trace.get("terms") or []),
        restored=trace.get("restored"),
        parts=list(trace.get("parts") or []),
        reading=sentences(t, reading, asked, alone="reading.try_alone"),
    )


async def _read(rt: Runtime, question: str, earlier: str) -> Reading:
    """How ``question`` is read after ``earlier`` (if any), as a conversation reads it."""
    if not earlier:
        return Reading("alone", question)
    read = await rt.conversations.read_turns(question, [Turn(earlier)], None)
    return parse_reading(read.to_json()) or Reading("alone", question)


async def try_page(request: web.Request) -> web.Response:
    """A GET (``?q=``, ``&prev=``): asking changes nothing, and the URL can be shared with a
    colleague."""
    question = request.query.get("q", "").strip()[:MAX_QUESTION_CHARS]
    earlier = request.query.get("prev", "").strip()[:MAX_QUESTION_CHARS]
    explained = None
    if question:
        rt = runtime(request)
        reading = await _read(rt, question, earlier)
        answer = await rt.answerer.answer(reading.asked)
        reading = with_said(reading, said_of(answer))
        explained = explain(
            answer,
            translator(request),
            reading,
            question,
            rt.settings.admin.review_below,
        )
    return await render(
        request, "try.html", {"question": question, "earlier": earlier, "result": explained}
    )


def setup(app: web.Application) -> None:
    app.router.add_get("/try", try_page, name="admin.tryit")
