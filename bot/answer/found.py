"""What tier 1 and the search found for one question, and the time each stage took."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.answer.read import Read
from bot.answer.replies import Answer
from bot.core.citations import Citation
from bot.core.types import Language
from retrieval.facts.book import FactsBook
from retrieval.faq.decision import FaqDecision
from retrieval.faq.sources import SourceDocument
from retrieval.search.hits import Hit
from retrieval.thresholds import Thresholds

if TYPE_CHECKING:  # the facts tier reads Found: imported for the annotation only
    from bot.answer.facts.citing import FactsReply


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
    # The question as read once (bot.answer.read): what every tier reads it to ask.
    read: Read | None = None
    # How the question was read for search: restored, written out, split into its parts.
    expanded: str = ""
    parts: tuple[tuple[str, str], ...] = ()  # each part as typed and as embedded
    # What tier 2 decided, for the fallback and the diagnostics (typed, not trace keys):
    # it found passages but quoted none (abstained), or was not sure enough of its quotes.
    abstained: bool = False
    unsure: bool = False
    documents_features: tuple[float, ...] = ()
    documents_probability: float | None = None
    # The school's facts tables and catalogue, for the exact answers before tier 2.
    facts: FactsBook | None = None
    # A question of several parts the tables answer in part: each part's reply from them, None
    # for the parts tier 2 quotes the documents for (bot.answer.facts.tier ``by_part``).
    facts_parts: tuple[FactsReply | None, ...] = ()
    # The ingested document the accepted FAQ entry names as its source, cited by tier 1.
    faq_document: SourceDocument | None = None


def hit_citation(n: int, hit: Hit) -> Citation:
    """Source number ``n`` of a reply: the document (and page) of ``hit``, or its FAQ entry."""
    return Citation(
        n=n,
        title=hit.title,
        source=hit.source,
        url=hit.url,
        page=hit.page,
        chunk_id=hit.chunk_id if hit.faq_id is None else None,
        year=hit.year,
    )
