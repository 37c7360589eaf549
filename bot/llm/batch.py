"""The runner of the offline LLM jobs (``tuvan augment``, ``tuvan faq enrich``, ``tuvan faq
generate``; their shape is ``bot.knowledge.jobs.OfflineJob``): many calls, run concurrently under
the job's ``BatchLimits``, each retried with backoff, and estimated before they are made.

Resumability belongs to the jobs: each stores its results as it goes and, on a re-run, skips the
items whose result is already stored for the same source version. This module only runs calls.

The openai client already retries connection errors, 429 and 5xx inside one call; here a call
that still fails (or whose reply the job cannot use: ``LlmError``) is tried again after
``base_delay * 2**n`` seconds with jitter, ``attempts`` times in all, and then reported as failed
without stopping the other items.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypedDict, TypeVar

from bot.core.errors import TuvanError
from bot.core.settings import LlmSettings
from bot.llm.client import Message
from retrieval.chunking.base import approx_tokens

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Estimate:
    """What a job would cost: calls and tokens (prompt tokens by `approx_tokens`, the reply at
    most ``max_tokens`` each; servers bill what is generated, usually far less)."""

    calls: int = 0
    prompt_tokens: int = 0
    max_completion_tokens: int = 0

    def add(self, messages: Sequence[Message], max_tokens: int) -> None:
        self.calls += 1
        # ~4 tokens of chat framing per message
        self.prompt_tokens += sum(approx_tokens(m["content"]) + 4 for m in messages)
        self.max_completion_tokens += max_tokens

    def __str__(self) -> str:
        return (
            f"{self.calls} LLM calls, ~{self.prompt_tokens:,} prompt tokens, "
            f"up to {self.max_completion_tokens:,} completion tokens"
        )


class BatchOptions(TypedDict):
    concurrency: int
    attempts: int
    base_delay: float


@dataclass(frozen=True)
class BatchLimits:
    """How a job calls the model: at most ``concurrency`` calls at once, each item tried
    ``attempts`` times with backoff from ``base_delay`` seconds, replies of up to ``max_tokens``
    (what an estimate counts)."""

    concurrency: int = 4
    attempts: int = 3
    base_delay: float = 1.0
    max_tokens: int = 700

    @classmethod
    def of(cls, settings: LlmSettings, *, base_delay: float = 1.0) -> BatchLimits:
        """The limits ``TUVAN_LLM__CONCURRENCY``, ``__ATTEMPTS`` and ``__MAX_TOKENS`` set."""
        return cls(settings.concurrency, settings.attempts, base_delay, settings.max_tokens)

    def batch_options(self) -> BatchOptions:
        """The keywords of ``run_batch`` these limits set."""
        return {
            "concurrency": self.concurrency,
            "attempts": self.attempts,
            "base_delay": self.base_delay,
        }


DEFAULT_LIMITS = BatchLimits()


@dataclass
class BatchResult(Generic[T, R]):
    done: list[tuple[T, R]] = field(default_factory=list)
    failed: list[tuple[T, str]] = field(default_factory=list)
    calls: int = 0  # attempts made, retries included


async def run_batch(
    items: Iterable[T],
    work: Callable[[T], Awaitable[R]],
    *,
    concurrency: int = 4,
    attempts: int = 3,
    base_delay: float = 1.0,
    on_done: Callable[[T, R], Awaitable[None]] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> BatchResult[T, R]:
    """Run ``work`` on every item, at most ``concurrency`` at a time.

    ``on_done`` runs for each success as soon as it comes (one at a time, so it may use one
    database session), which is what makes a job resumable: an interrupted run keeps what it
    stored. Failures are logged and collected; they never stop the batch.
    """
    result: BatchResult[T, R] = BatchResult()
    gate = asyncio.Semaphore(concurrency)
    store = asyncio.Lock()

    async def one(item: T) -> None:
        async with gate:
            for attempt in range(1, attempts + 1):
                result.calls += 1
                try:
                    value = await work(item)
                except TuvanError as exc:
                    if attempt == attempts:
                        log.warning("giving up after %d attempts: %s", attempts, exc)
                        result.failed.append((item, str(exc)))
                        break
                    delay = base_delay * 2 ** (attempt - 1) * (0.5 + random.random())
                    log.info("attempt %d failed (%s); retrying in %.1f s", attempt, exc, delay)
                    await asyncio.sleep(delay)
                    continue
                async with store:
                    if on_done is not None:
                        await on_done(item, value)
                    result.done.append((item, value))
                break
        if on_progress is not None:
            on_progress(1)

    await asyncio.gather(*(one(item) for item in items))
    return result
