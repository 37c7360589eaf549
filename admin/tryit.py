""" "Try it": ask a question as a student would and see why tuvan answers the way it does.

Runs the real answerer (nothing is stored) and lays out its trace: the reply as the student
reads it (its Markdown rendered: admin.answer_markup), why it is what it is in the staff's words
(admin.explanations), the nearest FAQ entries with what became of each, and the passages found
with the sources' titles and addresses, the scorer's confidence, and how the question was read
(admin.readings). The figures (similarities, thresholds, ranks, time) are folded under "Chi tiết
kỹ thuật".

An earlier question (``?prev=``) tries a follow-up: the question is made standalone with it by
bot.answer.followup.standalone_question, as the worker and the web chat do, then answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web
from markupsafe import Markup

from admin.answer_markup import answer_html
from admin.confidence import is_unsure, percent, unsure_sentence
from admin.explanations import Explanation, explain_reply, step_sentences
from admin.i18n import Translator, add_strings
from admin.readings import Reading, parse_reading, sentences
from admin.web import render, runtime, translator
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
        "try.reading": ("Cách đọc: {sentences}", "Reading: {sentences}"),
        "try.confidence": (
            "Độ tin cậy: {pct}% (xác suất câu trả lời đúng).",
            "Confidence: {pct}% (the chance the answer is right).",
        ),
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
        "try.entry": ("Mục", "Entry"),
        "try.figures_faq": ("Độ giống của các câu hỏi thường gặp", "FAQ similarities"),
        "try.figures_passages": ("Điểm của các đoạn tài liệu", "Passage scores"),
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
        "try.sources": ("Nguồn", "Sources"),
    }
)


@dataclass(frozen=True)
class Weighed:
    """One FAQ entry tier 1 read: the entry, whether it was taken, and why, in words."""

    verdict: CandidateVerdict
    sentences: list[str]


@dataclass(frozen=True)
class Passage:
    """One passage found: the hit, its source as staff may see it, whether tier 2 used it."""

    hit: Hit
    label: str
    href: str | None
    used: bool


@dataclass(frozen=True)
class Explained:
    """What the template shows, taken from an answer and its trace (absent parts are empty)."""

    answer: Answer
    answer_html: Markup
    why: Explanation
    weighed: list[Weighed]
    passages: list[Passage]
    thresholds: Any
    faq_threshold: float
    terms: list[str]
    restored: str | None
    parts: list[str]
    reading: list[str]  # how the question was read, in words
    confidence: int | None  # the scorer's, as a percentage
    unsure: str  # why such an answer would be looked at again, or ""


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
    confidence = answer.confidence
    return Explained(
        answer=answer,
        answer_html=answer_html(answer.answer),
        why=explain_reply(t, answer.tier, details),
        weighed=[
            Weighed(v, step_sentences(t, faq_step(v, t_faq)))
            for v in (decision.verdicts if decision is not None else ())
        ],
        passages=[
            Passage(h, citation_label(h.title, h.source), public_url(h.url), h.chunk_id in passing)
            for h in trace.get("hits") or []
        ],
        thresholds=thresholds,
        faq_threshold=t_faq,
        terms=list(trace.get("terms") or []),
        restored=trace.get("restored"),
        parts=list(trace.get("parts") or []),
        reading=sentences(t, reading, asked, alone="reading.try_alone"),
        confidence=percent(confidence) if confidence is not None else None,
        unsure=(
            unsure_sentence(t, confidence, review_below)
            if confidence is not None and is_unsure(answer.tier, confidence, review_below)
            else ""
        ),
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
