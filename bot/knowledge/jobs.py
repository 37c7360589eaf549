"""The shape of the offline jobs, and how a long use-case reports progress.

Every offline LLM job (``DocumentAugmentJob``, ``FaqParaphraseJob``, ``FaqDraftJob``, and
``ExtractiveSummaryJob``, which needs no LLM) is an ``OfflineJob``: built from the store, the
indexer, the model (None when none is configured), its options and the ``BatchLimits`` of its
calls; ``plan()`` counts what a run would do and estimates its calls without making one or
changing anything (``--dry-run``); ``run(bars)`` does it, resumably. Both return the job's report.

Progress: a use-case asks for one counter per stage (a label and the total, None when not known
yet) and advances it. The command line answers with progress bars; tests, the admin and library
callers with nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.llm.batch import DEFAULT_LIMITS, BatchLimits
from bot.llm.client import LlmClient
from retrieval.index.indexer import Indexer

R_co = TypeVar("R_co", covariant=True)
OptionsT = TypeVar("OptionsT")

Progress = Callable[[int], None]  # advance by n
ProgressBars = Callable[[str, int | None], Progress]  # a counter for a stage: label, total


def _ignore(_: int) -> None:
    return None


def no_progress(label: str, total: int | None) -> Progress:
    """The counters of a caller that watches nothing."""
    return _ignore


class OfflineJob(Protocol[R_co]):
    """A job run offline over the knowledge base (see the module's docstring)."""

    async def plan(self) -> R_co:
        """What a run would do, and its estimated calls; changes nothing."""
        ...

    async def run(self, bars: ProgressBars = no_progress) -> R_co:
        """Do it; each result is stored as it comes, so an interrupted run keeps it."""
        ...


class LlmJob(Generic[OptionsT]):
    """What every offline LLM job is built from: the store, the indexer, the model (None when
    none is configured), its options and the limits of its calls."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        indexer: Indexer,
        llm: LlmClient | None,
        options: OptionsT,
        limits: BatchLimits = DEFAULT_LIMITS,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.indexer = indexer
        self.llm = llm
        self.options = options
        self.limits = limits
