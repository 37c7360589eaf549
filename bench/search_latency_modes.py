"""The retrieval modes search_latency times (each a searcher over one session and question) and
the loop that times them per question."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from common import progress
from search_latency_store import Question
from search_proposals import prune_terms, pruned_fts_ranking, search_with
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.core.settings import SearchSettings, Settings
from retrieval.query import search_query
from retrieval.search.hits import Hit
from retrieval.search.hybrid import search_chunks

Searcher = Callable[[AsyncSession, Question], Awaitable[list[Hit]]]


@dataclass
class Mode:
    name: str
    run: Searcher
    sampled: bool  # slow: only on the sample of questions
    ms: list[float]
    hits: list[bool | None]  # Hit@10 per question timed (None: no judgement)


def modes(settings: Settings, inverted: Any, df: dict[str, int], prune_limit: float) -> list[Mode]:
    fts = settings.search.model_copy(update={"keyword": "fts"})
    bm25 = settings.search.model_copy(update={"keyword": "bm25"})

    def current(mode: str, s: SearchSettings) -> Searcher:
        async def run(session: AsyncSession, q: Question) -> list[Hit]:
            return await search_chunks(
                session,
                q.vector,
                q.terms or [],
                s,
                limit=10,
                mode=mode,  # type: ignore[arg-type]
                query_text=q.text,
            )

        return run

    def answering(s: SearchSettings) -> Searcher:
        async def run(session: AsyncSession, q: Question) -> list[Hit]:
            return await search_query(session, q.prepared, q.vectors, s, limit=10)

        return run

    def inverted_bm25(hybrid: bool) -> Searcher:
        async def run(session: AsyncSession, q: Question) -> list[Hit]:
            ranked = inverted.rank(q.terms or [], fts.candidates)
            return await search_with(
                session, q.vector, ranked, fts, hybrid=hybrid, query_text=q.text
            )

        return run

    def pruned_fts(hybrid: bool) -> Searcher:
        async def run(session: AsyncSession, q: Question) -> list[Hit]:
            terms = prune_terms(q.terms or [], df, prune_limit)
            ranked = await pruned_fts_ranking(session, terms, fts.candidates)
            return await search_with(
                session, q.vector, ranked, fts, hybrid=hybrid, query_text=q.text
            )

        return run

    specs: list[tuple[str, Searcher, bool]] = [
        ("dense", current("dense", fts), False),
        ("keyword (fts)", current("keyword", fts), True),
        ("bm25", current("bm25", fts), True),
        ("hybrid (fts)", current("hybrid", fts), True),
        ("hybrid (bm25)", current("hybrid", bm25), True),
        ("hybrid as answered (bm25, score fusion, parts)", answering(settings.search), False),
        ("proposed: bm25, inverted index", inverted_bm25(False), False),
        ("proposed: hybrid (bm25, inverted index)", inverted_bm25(True), False),
        ("proposed: fts, frequent terms pruned", pruned_fts(False), False),
        ("proposed: hybrid (fts, pruned)", pruned_fts(True), False),
    ]
    return [Mode(name, run, sampled, [], []) for name, run, sampled in specs]


async def time_modes(
    sessionmaker: async_sessionmaker[AsyncSession],
    questions: list[Question],
    sample: set[int],
    all_modes: list[Mode],
    keys: list[str],
    warmup: int,
) -> None:
    for i, q in enumerate(questions[:warmup]):
        for mode in all_modes:
            if not mode.sampled or i in sample:
                async with sessionmaker() as session:
                    await mode.run(session, q)
    for i, q in enumerate(questions):
        for mode in all_modes:
            if mode.sampled and i not in sample:
                continue
            t0 = time.perf_counter()
            async with sessionmaker() as session:
                hits = await mode.run(session, q)
            mode.ms.append((time.perf_counter() - t0) * 1000)
            found = {keys[h.chunk_id - 1] for h in hits}
            mode.hits.append(bool(found & q.expected) if q.expected else None)
        if (i + 1) % 50 == 0 or i + 1 == len(questions):
            progress(f"searched {i + 1}/{len(questions)} questions")
