""" "Try it": ask a question as a student would and see why tuvan answers the way it does.

Runs the real answerer (nothing is stored) and lays out its trace: the nearest FAQ entries with
their similarity, the threshold and the near-miss guard's verdict; the retrieved passages with
their scores, which of them passed ``t_doc``; and the final reply with its tier and reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from admin.i18n import add_strings
from admin.web import render, runtime
from bot.answer.question import MAX_QUESTION_CHARS
from bot.answer.replies import Answer
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
        "try.ask": ("Hỏi", "Ask"),
        "try.reply": ("Câu trả lời", "Reply"),
        "try.tier": ("Tầng trả lời: {tier}", "Answered by: {tier}"),
        "try.tier.faq": ("1 · câu hỏi thường gặp (nguyên văn)", "1 · FAQ (word for word)"),
        "try.tier.documents": ("2 · tài liệu (có trích dẫn)", "2 · documents (cited)"),
        "try.tier.fallback": (
            "chưa trả lời được (không đủ thông tin)",
            "not answered (not enough to go on)",
        ),
        "try.reason": ("Lý do: {reason}", "Why: {reason}"),
        "try.thresholds": (
            "Ngưỡng: t_faq = {t_faq}, t_doc = {t_doc} ({origin})",
            "Thresholds: t_faq = {t_faq}, t_doc = {t_doc} ({origin})",
        ),
        "try.timing": ("Thời gian: {ms} ms", "Time: {ms} ms"),
        "try.faq_matches": ("Câu hỏi thường gặp gần nhất", "Nearest FAQ entries"),
        "try.faq_none": ("Không có mục đã xuất bản nào.", "No published entry."),
        "try.matched": ("Khớp với", "Matched text"),
        "try.similarity": ("Độ tương đồng", "Similarity"),
        "try.guard": ("Bộ lọc gần giống", "Near-miss guard"),
        "try.verdict": ("Kết luận", "Verdict"),
        "try.accepted": ("được chọn", "accepted"),
        "try.refused": ("không chọn", "not taken"),
        "try.guard_ok": ("không xung đột", "no conflict"),
        "try.guard_off": ("—", "—"),
        "try.chunks": ("Đoạn tài liệu tìm được", "Retrieved passages"),
        "try.chunks_none": (
            "Không tìm tài liệu (câu hỏi thường gặp đã trả lời) hoặc không có đoạn nào.",
            "No document search (the FAQ answered) or no passage found.",
        ),
        "try.passage": ("Đoạn", "Passage"),
        "try.score": ("Điểm xếp hạng", "Rank score"),
        "try.ranks": ("Hạng (vector / từ khoá)", "Rank (vector / keyword)"),
        "try.used": ("Dùng", "Used"),
        "try.out_of_scope": (
            "Câu hỏi nhắc tới điều tài liệu không có: {what}",
            "The question names what the passages do not: {what}",
        ),
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
class Explained:
    """What the template shows, taken from an answer's trace (absent parts are empty)."""

    answer: Answer
    verdicts: list[CandidateVerdict]
    hits: list[Hit]
    passing: set[int]
    thresholds: Any
    out_of_scope: dict[str, Any]
    terms: list[str]
    restored: str | None
    parts: list[str]


def explain(answer: Answer) -> Explained:
    trace = answer.trace
    decision = trace.get("faq")
    passing = trace.get("passing") or []
    return Explained(
        answer=answer,
        verdicts=list(decision.verdicts) if decision is not None else [],
        hits=list(trace.get("hits") or []),
        passing={h.chunk_id for h in passing},
        thresholds=trace.get("thresholds"),
        out_of_scope=dict(trace.get("out_of_scope") or {}),
        terms=list(trace.get("terms") or []),
        restored=trace.get("restored"),
        parts=list(trace.get("parts") or []),
    )


async def try_page(request: web.Request) -> web.Response:
    """A GET (``?q=``): asking changes nothing, and the URL can be shared with a colleague."""
    question = request.query.get("q", "").strip()[:MAX_QUESTION_CHARS]
    explained = None
    if question:
        explained = explain(await runtime(request).answerer.answer(question))
    return await render(request, "try.html", {"question": question, "result": explained})


def setup(app: web.Application) -> None:
    app.router.add_get("/try", try_page, name="admin.tryit")
