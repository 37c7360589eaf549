"""What the answerer is built from, once at start-up (``bot.runtime.build_parts``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from bot.core.errors import ConfigError
from bot.core.settings import Settings
from bot.llm.client import LlmClient, load_prompt
from retrieval.decisions import Decisions, load_decisions
from retrieval.embedders.base import Embedder, FloatArray, QueryBatcher
from retrieval.facts.book import FactsBook
from retrieval.faq.features import FEATURES
from retrieval.guard.catalogue import guard_with_catalogue
from retrieval.guard.checks import NearMissGuard
from retrieval.search.rerank import Reranker
from retrieval.text.pack import load_pack
from retrieval.text.terms import TextProcessor


@dataclass
class AnswererParts:
    """The settings, models and vocabulary every tier reads; the prompts, loaded on first use."""

    settings: Settings
    embedder: Embedder
    processor: TextProcessor
    guard: NearMissGuard
    llm: LlmClient | None = None
    reranker: Reranker | None = None
    # The fitted decisions (retrieval/data/decisions.json): tier 1's scorer and, as they are
    # fitted, tier 2's and the conversation step's.
    decisions: Decisions = field(default_factory=load_decisions)
    _prompts: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    # The guard before the catalogue's majors were added, the one made with them, and the
    # catalogue it was made for (its facts book's signature).
    _base_guard: NearMissGuard | None = field(default=None, init=False, repr=False)
    _made_guard: NearMissGuard | None = field(default=None, init=False, repr=False)
    _catalogue: tuple[str, int] | None = field(default=None, init=False, repr=False)
    _queries: QueryBatcher | None = field(default=None, init=False, repr=False)
    _queries_of: Embedder | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        faq = self.decisions.faq
        if faq is not None and faq.scorer.features != FEATURES:
            raise ConfigError(
                f"the decisions file's FAQ scorer weighs {', '.join(faq.scorer.features)}, "
                f"this version of tier 1 weighs {', '.join(FEATURES)}: fit it again "
                "(bench/fit_decisions.py --write)"
            )

    def read_catalogue(self, book: FactsBook, today: date | None = None) -> None:
        """Put the school's majors and campus names from ``book``, and the year before its
        admission year as "năm ngoái" says it, into the guard every tier reads
        (retrieval.guard.catalogue); made again only when the catalogue or that year changed.
        A guard set from outside (an operator's vocabulary reloaded) is the new base."""
        if self.guard is not self._made_guard:
            self._base_guard, self._catalogue = self.guard, None
        year = book.admission_year(self.settings.answer.admission_year, today or date.today())
        if self._catalogue == (book.signature, year):
            return
        base = self._base_guard or self.guard
        majors = [(m.name, m.code, m.aliases) for m in book.majors]
        self.guard = self._made_guard = guard_with_catalogue(
            base, majors, book.campuses, {year - 1: load_pack().facts.last_year}
        )
        self._catalogue = (book.signature, year)

    @property
    def guard_in_use(self) -> NearMissGuard | None:
        """The near-miss guard, unless ``TUVAN_ANSWER__NEAR_MISS_GUARD`` turns it off."""
        return self.guard if self.settings.answer.near_miss_guard else None

    async def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        """The question texts' vectors, questions asked at the same moment embedded in one call
        of the model (``QueryBatcher``)."""
        if self._queries is None or self._queries_of is not self.embedder:
            self._queries, self._queries_of = (
                QueryBatcher(self.embedder.embed_queries),
                self.embedder,
            )
        return await self._queries.embed(texts)

    def prompt(self, name: str) -> str:
        if name not in self._prompts:
            self._prompts[name] = load_prompt(self.settings.llm, name)
        return self._prompts[name]
