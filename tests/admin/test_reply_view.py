"""A reply as an admissions officer reads it, on the conversation view and in Try it: the answer
with its Markdown rendered (a table is a <table>, every cell escaped), where it came from as
titled links (the FAQ entry by its question, the documents by their titles), how sure tuvan was
in words, and the guard's reasoning and the figures folded under "Chi tiết kỹ thuật"."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.replies import Answer
from bot.core.citations import Citation
from bot.knowledge.demo import demo_kb_dir
from tests.admin._answers import exchange, outside_details
from tests.admin._support import AdminBrowser

AT = datetime(2024, 5, 2, 9, tzinfo=UTC)
FAQ = {
    row["id"]: row
    for row in map(json.loads, (demo_kb_dir() / "faq.jsonl").read_text("utf-8").splitlines())
}
TABLE = (
    "Học phí năm 2026:\n\n"
    "| Chương trình | Học phí/năm |\n|---|---|\n"
    "| Chuẩn | 32.500.000 đồng |\n"
    "| <script>alert(1)</script> | <img src=x onerror=alert(2)> **CLC** |\n\n"
    "Nguồn:\n[1] Học phí năm học 2026–2027 — https://shut.example.vn/hoc-phi"
)
GUARD = {
    "faq": [
        {
            "result": "guard",
            "faq_id": 25,
            "missing": [{"category": "attribute", "label": "điều được hỏi", "values": ["học phí"]}],
            "conflicts": [],
        }
    ],
    "documents": {"result": "answered", "how": "extractive", "passages": 2},
}
CITED = [
    {"n": 1, "title": "Học phí năm học 2026–2027", "source": "/srv/kb/hoc-phi.md",
     "url": "https://shut.example.vn/hoc-phi", "page": 3},
    {"n": 2, "title": "Quy chế <b>2026</b>", "source": "/srv/kb/quy-che.pdf", "url": None},
]  # fmt: skip


def shown(page: str, testid: str, end: str) -> str:
    found = page.split(f'data-testid="{testid}"', 1)
    assert len(found) == 2, testid
    return found[1].split(end, 1)[0]


def table_is_rendered_and_escaped(html: str) -> None:
    assert "<table>" in html
    assert "<td>Chuẩn</td>" in html
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in html
    assert "&lt;img src=x onerror=alert(2)&gt; <strong>CLC</strong></td>" in html
    assert "|---|" not in html
    assert "<script>" not in html
    assert "<img" not in html


async def test_the_conversation_shows_the_answer_its_sources_and_how_sure_folding_the_rest(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: dict[str, int]
) -> None:
    details = {
        "why": GUARD,
        "confidence": 0.62,
        "scores": {"chunks": [{"similarity": 0.9123}], "t_doc": 0.84},
        "reason": "2 chunks passed t_doc; answered extractive",
    }
    conv, docs = await exchange(
        sessionmaker, "hp clc bn", "documents", AT, details=details, citations=CITED, answer=TABLE
    )
    entry = demo_kb["shut-faq01"]
    faq_details = {"why": {"faq": [{"result": "verbatim", "faq_id": entry}]}, "faq_id": entry}
    _, faq = await exchange(
        sessionmaker, FAQ["shut-faq01"]["question"], "faq", AT + timedelta(minutes=1),
        conv=conv, details={**faq_details, "confidence": 0.97},
        answer=FAQ["shut-faq01"]["answer"],
    )  # fmt: skip
    _, fairly = await exchange(
        sessionmaker, "ktx ở đâu", "documents", AT + timedelta(minutes=2), conv=conv,
        details={"why": GUARD, "confidence": 0.85},
    )  # fmt: skip
    _, fallback = await exchange(
        sessionmaker, "vé máy bay", "fallback", AT + timedelta(minutes=3), conv=conv,
        details={"why": {"faq": [], "documents": {"result": "below"}}},
    )  # fmt: skip
    page = await viewer.page(f"/admin/conversations/{conv}")

    table_is_rendered_and_escaped(shown(page, f"answer-{docs}", "</div>"))
    assert ">hp clc bn<" in page  # what the student asked, as typed
    # where it came from: the documents by title, a public address only as a link
    sources = shown(page, f"sources-{docs}", "</ul>")
    assert (
        '[1] <a href="https://shut.example.vn/hoc-phi" rel="noopener noreferrer" '
        'target="_blank">Học phí năm học 2026–2027</a> · trang 3'
    ) in sources
    assert "[2] Quy chế &lt;b&gt;2026&lt;/b&gt;" in sources
    assert "/srv/kb" not in page
    # the FAQ entry that answered, linked to its page by its question
    question = FAQ["shut-faq01"]["question"]
    assert f'<a href="/admin/faq/{entry}">#{entry} · {question}</a>' in shown(
        page, f"sources-{faq}", "</ul>"
    )
    # how sure, in words; the unsure one says why it is in "Cần xem lại"
    assert shown(page, f"sure-{docs}", "</span>").endswith(">Không chắc")
    assert shown(page, f"sure-{faq}", "</span>").endswith(">Chắc chắn")
    assert shown(page, f"sure-{fairly}", "</span>").endswith(">Khá chắc")
    assert f'data-testid="sure-{fallback}"' not in page  # a fallback claims nothing
    assert "dưới mức 80%" in shown(page, f"unsure-{docs}", "</p>")
    # the plain outcome shown, the guard's reasoning and the figures folded
    assert shown(page, f"why-{docs}", "</p>") == ">Trả lời từ tài liệu: trích nguyên văn (2 đoạn)."
    folded = shown(page, f"technical-{docs}", "</details>")
    assert "Mục #25: câu hỏi hỏi về học phí nhưng mục này không nói về học phí" in folded
    assert "0.912" in folded
    assert "Tầng trả lời: Tài liệu" in folded
    plain = outside_details(page)
    for engine in ("câu hỏi hỏi về", "mục này không nói về", "0.912", "t_doc", "Tầng trả lời"):
        assert engine not in plain, engine


async def test_try_it_renders_a_table_in_the_answer_and_folds_the_weighing(
    viewer: AdminBrowser, answerer: Answerer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def answer(question: str) -> Answer:
        cited = Citation(1, "Học phí năm học 2026–2027", "/srv/kb/hp.md", "https://x.vn/hp", 2)
        return Answer(
            "documents", TABLE, "vi", citations=[cited], confidence=0.93, why=GUARD,
            reason="2 chunks passed t_doc; answered extractive",
        )  # fmt: skip

    monkeypatch.setattr(answerer, "answer", answer)
    page = await viewer.page("/admin/try?q=hp clc bn")
    table_is_rendered_and_escaped(shown(page, "try-answer", "</div>"))
    assert shown(page, "try-sure", "</span>").endswith(">Chắc chắn")
    assert '<a href="https://x.vn/hp"' in shown(page, "try-sources", "</ul>")
    assert "/srv/kb" not in page
    folded = shown(page, "technical", "</details>")
    assert "Mục #25: câu hỏi hỏi về học phí" in folded
    assert re.search(r'data-tier="documents"', folded)
    assert "<strong>Độ tin cậy:</strong> 93% (xác suất câu trả lời đúng)" in folded
    plain = outside_details(page)
    assert "câu hỏi hỏi về" not in plain
    assert "Tầng trả lời" not in plain
