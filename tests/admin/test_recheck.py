"""The "Cần xem lại" queue over real HTTP and the real PostgreSQL: answers marked 👎, asked
again within a minute, and fallbacks are listed; confident answers, a 👍 alone, small talk, a
late or different next question and other periods are not; "đã xem" takes an answer out (a
later 👎 brings it back); an opened answer shows its question, answer, tier, sources (never a
server path) and signals in Vietnamese, with English only under "Chi tiết kỹ thuật"; each
action works, with its CSRF token only; user text is escaped."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, quote, urlsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answer.answerer import Answerer
from bot.db.models import (
    AuditEntry,
    Document,
    FaqVariant,
)
from tests.admin._answers import FALLBACK, exchange, listed, outside_details, vote
from tests.admin._support import AdminBrowser

END = datetime(2024, 3, 10, 12, tzinfo=UTC)
PERIOD = "days=7&end=2024-03-10"
QUEUE = f"/admin/recheck?{PERIOD}"


async def test_each_signal_lists_an_answer_and_good_answers_stay_out(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], answerer: Answerer
) -> None:
    t = END - timedelta(days=1)
    _, disliked = await exchange(sessionmaker, "Mã trường là gì?", "faq", t)
    await vote(sessionmaker, disliked, -1, t + timedelta(minutes=1))
    _, liked = await exchange(sessionmaker, "Học phí ngành CNTT bao nhiêu?", "documents", t)
    await vote(sessionmaker, liked, 1, t + timedelta(minutes=1))
    _, retracted = await exchange(sessionmaker, "Trường ở đâu?", "faq", t)
    await vote(sessionmaker, retracted, -1, t + timedelta(minutes=1))
    await vote(sessionmaker, retracted, 1, t + timedelta(minutes=2))  # the latest vote wins
    _, fallback = await exchange(
        sessionmaker, "Trường có dạy tiếng Nhật không?", "fallback", t, details=FALLBACK
    )
    _, confident = await exchange(sessionmaker, "Điểm chuẩn ngành kế toán?", "documents", t)

    # Asked again, without diacritics, 20 s after the answer: the first answer is listed.
    conv, rephrased = await exchange(sessionmaker, "Hạn nộp hồ sơ là khi nào?", "documents", t)
    _, again = await exchange(
        sessionmaker, "han nop ho so khi nao a", "documents", t + timedelta(seconds=21), conv=conv
    )
    # The same words, but 90 s after the answer: not "right after".
    conv, late = await exchange(sessionmaker, "Trường có ký túc xá không?", "documents", t)
    await exchange(
        sessionmaker, "truong co ktx ko", "documents", t + timedelta(seconds=91), conv=conv
    )
    # Another question 10 s after the answer: a follow-up, not a rephrasing.
    conv, followed = await exchange(sessionmaker, "Học phí ngành Kế toán?", "documents", t)
    await exchange(
        sessionmaker,
        "Học phí ngành Kinh tế bao nhiêu?",
        "documents",
        t + timedelta(seconds=11),
        conv=conv,
    )

    # Small talk gets the fallback tier too: the reason the real answerer stores keeps it out.
    thanks = await answerer.answer("cảm ơn ad nhiều ạ")
    assert thanks.tier == "fallback"
    _, small_talk = await exchange(
        sessionmaker, "cảm ơn ad nhiều ạ", "fallback", t, details={"reason": thanks.reason}
    )
    _, last_month = await exchange(
        sessionmaker,
        "Trường có học bổng không?",
        "fallback",
        END - timedelta(days=30),
        details=FALLBACK,
    )

    page = await viewer.page(QUEUE)
    found = listed(page)
    assert found == {
        disliked: {"disliked"},
        fallback: {"fallback"},
        rephrased: {"rephrased"},
    }
    for left_out in (liked, retracted, confident, again, late, followed, small_talk, last_month):
        assert f'data-testid="member-{left_out}"' not in page
    assert 'data-testid="filter-disliked"' in page
    assert "Bị đánh giá 👎 (1)" in page

    only = listed(await viewer.page(f"{QUEUE}&signal=rephrased"))
    assert only == {rephrased: {"rephrased"}}
    earlier = listed(await viewer.page("/admin/recheck?days=7&end=2024-02-10"))
    assert earlier == {last_month: {"fallback"}}
    # No diagnostics on the list: no figures, no thresholds, no English reasons.
    assert "t_faq" not in page
    assert "0.844" not in page
    assert "group-create-faq" not in page  # viewers do not create entries


async def test_settling_takes_an_answer_out_and_a_later_dislike_brings_it_back(
    editor: AdminBrowser, viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    t = END - timedelta(days=1)
    _, answer = await exchange(sessionmaker, "Mã trường là gì?", "faq", t)
    await vote(sessionmaker, answer, -1, t + timedelta(minutes=1))
    _, other = await exchange(
        sessionmaker, "Trường có dạy tiếng Nhật không?", "fallback", t, details=FALLBACK
    )

    path = f"/admin/recheck/{answer}/settle"
    assert (await editor.post(path, {"next": QUEUE}, csrf="")).status == 403
    assert (await viewer.post(path, {"next": QUEUE})).status == 403
    assert answer in listed(await editor.page(QUEUE))

    response = await editor.post(path, {"next": QUEUE})
    assert response.status == 303
    assert response.headers["Location"] == f"{QUEUE}&msg=settled"
    page = await editor.page(QUEUE)
    assert set(listed(page)) == {other}
    async with sessionmaker() as session:
        audited = await session.scalar(
            select(AuditEntry).where(AuditEntry.entity == "answer", AuditEntry.entity_id == answer)
        )
    assert audited is not None
    assert audited.action == "settle"
    assert audited.actor.startswith("editor")

    # Opened again, the answer says who settled it.
    detail = await editor.page(f"/admin/recheck/{answer}")
    assert 'data-testid="recheck-settled"' in detail
    assert 'data-testid="recheck-settle"' not in detail

    # The student marks it 👎 again after that: it is back.
    await vote(sessionmaker, answer, -1, datetime.now(UTC))
    assert answer in listed(await editor.page(QUEUE))

    # A whole group at once; ids of anything but a bot answer are ignored.
    response = await editor.post(
        "/admin/recheck/settle",
        [("id", str(answer)), ("id", str(other)), ("id", "x"), ("next", QUEUE)],
    )
    assert response.status == 303
    assert 'data-testid="recheck-empty"' in await editor.page(QUEUE)
    assert (await editor.post("/admin/recheck/settle", [("id", "nonsense")])).status == 400
    assert (await editor.post("/admin/recheck/999999999/settle")).status == 404
    big = "/admin/recheck/settle"
    assert (await editor.post(big, [("id", "9" * 30), ("id", "-1")])).status == 400


async def test_an_opened_answer_says_what_happened_in_vietnamese_with_titles_not_paths(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    async with sessionmaker.begin() as session:
        document = Document(
            source="/srv/tuvan/kb/hoc-phi-2024.pdf",
            title="Học phí năm học 2024",
            url="https://tuyensinh.example.vn/hoc-phi",
            content_hash="x" * 64,
        )
        session.add(document)
        await session.flush()
        document_id = document.id
    citations = [
        {
            "n": 1,
            "title": "Học phí năm học 2024",
            "source": "/srv/tuvan/kb/hoc-phi-2024.pdf",
            "url": "https://tuyensinh.example.vn/hoc-phi",
            "page": 2,
        },
        {
            "n": 2,
            "title": "",
            "source": "/srv/tuvan/kb/quy-che.docx",
            "url": "file:///srv/tuvan/kb/quy-che.docx",
            "page": None,
        },
    ]
    details = {
        "scores": {"chunks": [{"similarity": 0.851}], "t_doc": 0.84},
        "reason": (
            "FAQ: similarity 0.844 below t_faq 0.925; 5 chunks passed t_doc; answered extractive"
        ),
    }
    t = END - timedelta(hours=2)
    conv, answer = await exchange(
        sessionmaker,
        "Học phí ngành CNTT một năm bao nhiêu?",
        "documents",
        t,
        details=details,
        citations=citations,
        answer="Theo tài liệu tuyển sinh: 30 triệu đồng.",
    )
    await exchange(
        sessionmaker,
        "hoc phi nganh cntt 1 nam bao nhieu",
        "documents",
        t + timedelta(seconds=30),
        conv=conv,
    )
    await vote(sessionmaker, answer, -1, t + timedelta(minutes=1))

    page = await editor.page(f"/admin/recheck/{answer}?back={quote(QUEUE)}")
    assert "Học phí ngành CNTT một năm bao nhiêu?" in page
    assert "Theo tài liệu tuyển sinh: 30 triệu đồng." in page
    tier = re.search(r'data-testid="recheck-tier">([^<]*)<', page)
    assert tier
    assert tier.group(1) == "Trả lời bằng trích dẫn từ tài liệu"
    assert 'data-testid="why-disliked"' in page
    assert (
        "giây sau câu trả lời, học sinh hỏi lại: “hoc phi nganh cntt 1 nam bao nhieu”"
        in html.unescape(page)
    )
    assert 'href="https://tuyensinh.example.vn/hoc-phi"' in page
    assert "quy-che.docx" in page  # a file without a web address: its name only
    assert "/srv/tuvan" not in page
    assert "file:" not in page
    link = re.search(rf'href="([^"]*)" data-testid="recheck-edit-document-{document_id}"', page)
    assert link
    target = urlsplit(html.unescape(link.group(1)))
    assert target.path == "/admin/documents"
    assert parse_qs(target.query)["q"] == ["Học phí năm học 2024"]
    documents = await editor.page(html.unescape(link.group(1)))
    assert f'data-testid="doc-row-{document_id}"' in documents
    # The English note and the figures are there, folded under "Chi tiết kỹ thuật" only.
    assert "t_faq 0.925" in page
    plain = outside_details(page)
    for english in ("t_faq", "t_doc", "chunks", "below", "passed", "0.851", "extractive"):
        assert english not in plain, english
    back = re.search(r'href="([^"]*)" data-testid="recheck-back"', page)
    assert back
    assert html.unescape(back.group(1)) == QUEUE
    for missing in ("999999999", "99999999999999999999999"):
        assert (await editor.get(f"/admin/recheck/{missing}")).status == 404


async def test_the_question_becomes_a_phrasing_of_the_entry_that_answered(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession], demo_kb: dict[str, int]
) -> None:
    entry = demo_kb["shut-faq01"]
    other = demo_kb["shut-faq02"]
    t = END - timedelta(hours=1)
    # Stored before 6/6: the entry named by its external id only.
    _, answer = await exchange(
        sessionmaker,
        "ma truong minh la gi vay ad",
        "faq",
        t,
        details={"faq_external_id": "shut-faq01", "scores": {"faq": 0.93}, "reason": "ok"},
    )
    await vote(sessionmaker, answer, -1, t + timedelta(minutes=1))
    page = await editor.page(f"/admin/recheck/{answer}")
    assert f"Trả lời từ câu hỏi thường gặp #{entry}" in page
    assert f'data-testid="recheck-add-variant-{entry}"' in page
    assert f'href="/admin/faq/{entry}" data-testid="recheck-edit-faq"' in page

    path = f"/admin/recheck/{answer}/variant"
    form = {"variant": "Mã trường mình là gì vậy ad?", "faq_id": str(entry)}
    assert (await editor.post(path, form, csrf="")).status == 403
    response = await editor.post(path, form)
    assert response.status == 303
    assert response.headers["Location"] == f"/admin/recheck/{answer}?msg=variant_added"
    async with sessionmaker() as session:
        texts = set(
            await session.scalars(select(FaqVariant.text).where(FaqVariant.faq_id == entry))
        )
        audited = await session.scalar(
            select(AuditEntry).where(
                AuditEntry.entity == "faq",
                AuditEntry.entity_id == entry,
                AuditEntry.action == "add_variant",
            )
        )
    assert "Mã trường mình là gì vậy ad?" in texts
    assert audited is not None
    assert answer not in listed(await editor.page(QUEUE))  # settled by the phrasing

    # Another entry, typed by number; then one that does not exist, and an empty phrasing.
    _, second = await exchange(sessionmaker, "chi tieu khmt 2026", "fallback", t, details=FALLBACK)
    form = {"variant": "chỉ tiêu KHMT 2026", "faq_id": "other", "other_faq_id": str(other)}
    assert (await editor.post(f"/admin/recheck/{second}/variant", form)).status == 303
    async with sessionmaker() as session:
        texts = set(
            await session.scalars(select(FaqVariant.text).where(FaqVariant.faq_id == other))
        )
    assert "chỉ tiêu KHMT 2026" in texts
    for bad in (
        {"variant": "x", "faq_id": "other", "other_faq_id": "999999"},
        {"variant": "", "faq_id": str(other)},
    ):
        response = await editor.post(f"/admin/recheck/{second}/variant", bad)
        assert response.headers["Location"] == f"/admin/recheck/{second}?error=variant"
    assert 'data-testid="error"' in await editor.page(f"/admin/recheck/{second}?error=variant")


async def test_add_to_the_faq_opens_the_editor_with_the_question(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    question = "Trường có dạy tiếng Nhật không?"
    _, answer = await exchange(
        sessionmaker, question, "fallback", END - timedelta(hours=1), details=FALLBACK
    )
    page = await editor.page(f"/admin/recheck/{answer}")
    assert "Chưa trả lời được" in page
    link = re.search(r'href="([^"]*)" data-testid="recheck-add-faq"', page)
    assert link
    target = urlsplit(html.unescape(link.group(1)))
    assert target.path == "/admin/faq/new"
    assert parse_qs(target.query)["question"] == [question]
    assert f">{question}</textarea>" in await editor.page(html.unescape(link.group(1)))
    group_link = re.search(
        r'href="([^"]*)" data-testid="group-create-faq"', await editor.page(QUEUE)
    )
    assert group_link
    assert parse_qs(urlsplit(html.unescape(group_link.group(1))).query)["question"] == [question]


async def test_user_text_is_escaped(
    editor: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    script = "Ký túc xá <script>alert('x')</script> có wifi không?"
    conv, answer = await exchange(
        sessionmaker, script, "fallback", END - timedelta(hours=1), details=FALLBACK
    )
    await exchange(
        sessionmaker,
        script + " ạ",
        "fallback",
        END - timedelta(hours=1) + timedelta(seconds=20),
        conv=conv,
    )
    escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
    for path in (QUEUE, f"/admin/recheck/{answer}"):
        page = await editor.page(path)
        assert "<script>alert" not in page
        assert escaped in page


async def test_the_old_address_and_an_empty_period(viewer: AdminBrowser) -> None:
    response = await viewer.get("/admin/unanswered?days=7&end=2024-03-10")
    assert response.status == 301
    assert response.headers["Location"] == "/admin/recheck?days=7&end=2024-03-10"
    page = await viewer.page("/admin/recheck?days=7&end=2001-01-01")
    assert 'data-testid="recheck-empty"' in page
    assert 'data-testid="nav-recheck"' in page
    assert ">Cần xem lại</a>" in page
