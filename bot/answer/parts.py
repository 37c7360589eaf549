"""What the answerer is built from, once at start-up (``bot.runtime.build_parts``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.core.settings import Settings
from bot.llm.client import LlmClient, load_prompt
from retrieval.decisions import Decisions, load_decisions
from retrieval.embedders.base import Embedder
from retrieval.guard.checks import NearMissGuard
from retrieval.search.rerank import Reranker
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

    @property
    def guard_in_use(self) -> NearMissGuard | None:
        """The near-miss guard, unless ``TUVAN_ANSWER__NEAR_MISS_GUARD`` turns it off."""
        return self.guard if self.settings.answer.near_miss_guard else None

    def prompt(self, name: str) -> str:
        if name not in self._prompts:
            self._prompts[name] = load_prompt(self.settings.llm, name)
        return self._prompts[name]
