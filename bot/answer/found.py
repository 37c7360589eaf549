"""What tier 1 and the search found for one question, and the time each stage took."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bot.answer.reading import Reading
from bot.answer.replies import Answer
from bot.core.citations import Citation
from bot.core.types import Language
from retrieval.faq.decision import FaqDecision
from retrieval.search.hits import Hit
from retrieval.thresholds import Thresholds


class Timer:
    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round((time.perf_counter() - start) * 1000, 2)


@dataclass
class Found:
    """What tier 1 and the search found for one question, and how it scored."""

    question: str
    language: Language
    terms: list[str]
    thresholds: Thresholds
    decision: FaqDecision
    hits: list[Hit]
    trace: dict[str, Any]
    scores: dict[str, Any]
    passing: list[Hit] = field(default_factory=list)
    out_of_scope: dict[str, frozenset[str]] = field(default_factory=dict)
    small_talk: Answer | None = None  # the query plan found nothing to search (a greeting)
    reading: Reading | None = None  # what tier 2 reads the question to ask (bot.answer.extractive)


def hit_citation(n: int, hit: Hit) -> Citation:
    """Source number ``n`` of a reply: the document (and page) of ``hit``, or its FAQ entry."""
    return Citation(
        n=n,
        title=hit.title,
        source=hit.source,
        url=hit.url,
        page=hit.page,
        chunk_id=hit.chunk_id if hit.faq_id is None else None,
    )
