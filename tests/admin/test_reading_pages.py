"""How a message was read and how sure tuvan was, on each page that shows a reply: the
conversation, the "Cần xem lại" detail and Try it, in Vietnamese, with everything the student
typed escaped (a ``<script>`` in the question and in the earlier one), the English values of
``details["reading"]`` nowhere outside "Chi tiết kỹ thuật", and older replies (no reading) as
before."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.answer.replies import Answer
from tests.admin._answers import SURE, exchange, outside_details
from tests.admin._support import AdminBrowser

AT = datetime(2024, 3, 9, 12, tzinfo=UTC)
SCRIPT = "<script>alert('x')</script>"
EARLIER = f"chỉ tiêu ngành khmt năm nay bn {SCRIPT}"
ASKED = f"học phí bao nhiêu ngành khmt {SCRIPT}"
READING = {
    "mode": "context",
    "asked": ASKED,
    "taken": [{"slot": "major", "label": "ngành", "words": "khmt", "from_text": EARLIER}],
    "why": "no_subject",
    "stopped": None,
}
TOOK = f"Tin nhắn không nói ngành nên lấy ngành “khmt” từ câu hỏi trước: “{EARLIER}”."
ENGLISH_VALUES = ("no_subject", "context", "from_text", "stopped")


def shown(page: str, testid: str) -> str:
    """The text of the element ``testid``, unescaped."""
    found = re.search(rf'data-testid="{testid}">(.*?)</(?:p|span|li)>', page, re.S)
    assert found, testid
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def escaped_only(page: str) -> None:
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page


async def seed(sm: async_sessionmaker[AsyncSession]) -> tuple[int, int, int, int]:
    """A conversation: a question, its follow-up read with it (unsure), a question read alone
    after a pause, and an older follow-up stored with its standalone form only."""
    conv, _ = await exchange(sm, EARLIER, "documents", AT, details={**SURE, "confidence": 0.9})
    details = {**SURE, "confidence": 0.62, "reading": READING}
    _, follow_up = await exchange(
        sm, f"học phí bao nhiêu {SCRIPT}", "documents", AT + timedelta(seconds=30),
        conv=conv, details=details, standalone=ASKED,
    )  # fmt: skip
    alone = {"mode": "alone", "asked": "ký túc xá ở đâu", "taken": [], "stopped": "pause"}
    _, paused = await exchange(
        sm, "ký túc xá ở đâu", "documents", AT + timedelta(hours=3), conv=conv,
        details={**SURE, "confidence": 0.95, "reading": alone},
    )  # fmt: skip
    _, older = await exchange(
        sm, "còn ngành cntt", "documents", AT + timedelta(hours=4), conv=conv,
        standalone="học phí bao nhiêu ngành cntt",
    )  # fmt: skip
    return conv, follow_up, paused, older


async def test_the_conversation_says_how_each_message_was_read(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    conv, follow_up, paused, older = await seed(sessionmaker)
    page = await viewer.page(f"/admin/conversations/{conv}")
    assert shown(page, f"reading-{follow_up}") == (
        f"{TOOK} Câu được trả lời: “{ASKED}”."
    )  # the question's own "Hiểu là" goes: the reading names it
    assert shown(page, f"unsure-{follow_up}") == (
        "tuvan không chắc câu trả lời này (độ tin cậy 62%, dưới mức 80%)."
    )
    assert shown(page, f"reading-{paused}") == (
        "Đọc riêng tin nhắn này. Không dùng câu hỏi trước: đã cách quá lâu."
    )
    assert f'data-testid="unsure-{paused}"' not in page
    # Stored before readings were: as before, the standalone form under the question.
    assert f'data-testid="reading-{older}"' not in page
    assert html.unescape(page).count("Hiểu là: ") == 1
    assert "Hiểu là: học phí bao nhiêu ngành cntt" in html.unescape(page)
    escaped_only(page)
    plain = outside_details(page)
    for english in ENGLISH_VALUES:
        assert english not in plain, english


async def test_the_recheck_detail_says_how_the_message_was_read(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    _, follow_up, _, older = await seed(sessionmaker)
    page = await viewer.page(f"/admin/recheck/{follow_up}")
    assert shown(page, "recheck-reading") == (
        f"Cách đọc tin nhắn: {TOOK} Câu được trả lời: “{ASKED}”."
    )
    assert shown(page, "why-unsure").startswith("tuvan không chắc câu trả lời này")
    escaped_only(page)
    assert 'data-testid="recheck-reading-data"' in page  # the data, folded
    plain = outside_details(page)
    for english in ENGLISH_VALUES:
        assert english not in plain, english
    old = await viewer.page(f"/admin/recheck/{older}")
    assert "recheck-reading" not in old
    assert "Hiểu thành: học phí bao nhiêu ngành cntt" in html.unescape(old)


async def test_try_it_reads_one_question_alone_and_shows_how_sure_it_is(
    viewer: AdminBrowser, answerer: Answerer, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    async def answer(question: str) -> Answer:
        asked.append(question)
        return Answer("documents", "Theo tài liệu: 30 triệu.", "vi", confidence=0.55)

    monkeypatch.setattr(answerer, "answer", answer)
    page = await viewer.page(f"/admin/try?q=học phí {SCRIPT}")
    assert asked == [f"học phí {SCRIPT}"]
    assert shown(page, "try-reading") == "Đọc riêng câu hỏi này."
    assert shown(page, "try-sure") == "Không chắc"
    assert shown(page, "try-unsure") == (
        "tuvan không chắc câu trả lời này (độ tin cậy 55%, dưới mức 80%). "
        "Câu trả lời như vậy sẽ vào “Cần xem lại”."
    )
    # the figure itself under "Chi tiết kỹ thuật"
    figure = "<strong>Độ tin cậy:</strong> 55% (xác suất câu trả lời đúng)"
    assert figure in page
    assert figure not in outside_details(page)
    escaped_only(page)

    async def sure(question: str) -> Answer:
        return Answer("faq", "SHT", "vi", confidence=0.97)

    monkeypatch.setattr(answerer, "answer", sure)
    page = await viewer.page("/admin/try?q=mã trường")
    assert shown(page, "try-sure") == "Chắc chắn"
    assert "<strong>Độ tin cậy:</strong> 97% (xác suất câu trả lời đúng)" in page

    async def unscored(question: str) -> Answer:
        return Answer("fallback", "Xin lỗi", "vi")

    monkeypatch.setattr(answerer, "answer", unscored)
    unsure = await viewer.page("/admin/try?q=thời tiết")
    assert "try-sure" not in unsure
    assert "Độ tin cậy" not in unsure


async def test_try_it_with_an_earlier_question_tries_a_follow_up(
    viewer: AdminBrowser, answerer: Answerer, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = answerer.answer
    asked: list[str] = []

    async def answer(question: str) -> Answer:
        asked.append(question)
        return await real(question)

    monkeypatch.setattr(answerer, "answer", answer)
    earlier = "Chỉ tiêu ngành Khoa học máy tính năm 2026 là bao nhiêu?"
    page = await viewer.page(f"/admin/try?q=còn ngành Kỹ thuật máy tính thì sao?&prev={earlier}")
    [standalone] = asked
    assert "Kỹ thuật máy tính" in standalone
    assert "Khoa học máy tính" not in standalone
    # It names another major, so only what it lacks comes from the earlier question.
    reading = shown(page, "try-reading")
    assert reading.startswith("Tin nhắn hỏi tiếp câu trước"), reading
    assert "điều được hỏi “chỉ tiêu”" in reading
    assert "Khoa học máy tính" not in reading.split("Câu được trả lời:")[1]
    assert f"Câu được trả lời: “{standalone}”." in reading
    assert f'value="{earlier}"' in page  # the form keeps the earlier question
    # A question that stands on its own after it: read alone.
    alone = "Ký túc xá của trường nằm ở cơ sở nào và có những tiện ích gì?"
    page = await viewer.page(f"/admin/try?q={alone}&prev={earlier}")
    assert shown(page, "try-reading").startswith("Đọc riêng câu hỏi này.")
    assert "Khoa học máy tính" not in shown(page, "try-reading")
    page = await viewer.page(f"/admin/try?q=ngành đó học phí bao nhiêu&prev={SCRIPT} ngành CNTT")
    escaped_only(page)


async def test_try_it_names_the_words_that_said_each_value(viewer: AdminBrowser) -> None:
    page = await viewer.page(f"/admin/try?q=hp nganh cntt bn v ad {SCRIPT}")
    reading = shown(page, "try-reading")
    assert reading.startswith("Đọc riêng câu hỏi này."), reading
    assert "“hp” (học phí)" in reading, reading
    assert "“cntt” (Công nghệ thông tin)" in reading, reading
    escaped_only(page)
