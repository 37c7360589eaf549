"""Whole-answer latency, by the tier that answered: what a student waits for, LLM excluded.

The UIT corpus and its FAQ are loaded into a throwaway database; then every UIT question
(questions.jsonl) and every FAQ query (faq_queries.jsonl), as written and folded (no
diacritics), is answered by ``Answerer.answer`` exactly as a channel calls it: read, restore,
embed, tier 1 (the fitted judge, made by the first question), tier 2 (search, compose, the
documents scorer), fallback. Each answer's wall time is recorded under its tier. The script
uses only what every commit since 6/6 has, so it runs against an earlier commit from a worktree
with the same venv (``PYTHONPATH=<worktree> .venv/bin/python bench/answer_latency.py``), for
side-by-side pairs (issue 1/4: the documents answer's p95 within +15 % of the commit before).
``--quick`` (a smoke run) loads only the files and FAQ entries its few questions cite.

    .venv/bin/python bench/answer_latency.py [--quick] [--warmup 10]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from common import DATASETS, Report, bench_settings, markdown_table, percentiles, read_jsonl
from small_sets import faq_sample, small_corpus

from bot.answer.answerer import Answerer
from bot.evaluation.data import (
    FaqItem,
    FaqQuery,
    Question,
    read_faq_items,
    read_faq_queries,
    read_questions,
)
from bot.evaluation.workspace import load_corpus, load_faq, throwaway_database
from bot.runtime import build_parts
from retrieval.text.folding import fold

UIT = DATASETS / "uit-admissions"


def _questions(quick: bool) -> list[str]:
    if quick:
        _, queries = _quick_faq()
        asked = [q.question for q in _quick_questions()[0]] + [q.query for q in queries]
    else:
        asked = [r["question"] for r in read_jsonl(UIT / "questions.jsonl")]
        asked += [r["query"] for r in read_jsonl(UIT / "faq_queries.jsonl")]
    return [form for q in asked for form in (q, fold(q))]


def _quick_questions() -> tuple[list[Question], Path]:
    return small_corpus(read_questions(UIT / "questions.jsonl"), UIT / "corpus")


def _quick_faq() -> tuple[list[FaqItem], list[FaqQuery]]:
    items = read_faq_items(UIT / "faq.jsonl")
    return faq_sample(items, read_faq_queries(UIT / "faq_queries.jsonl", {i.id for i in items}))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: a few questions and what they cite"
    )
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    report = Report("answer_latency" + ("_quick" if args.quick else ""))
    settings = bench_settings()
    parts = build_parts(settings)
    questions = _questions(args.quick)
    corpus, faq, warmup = UIT / "corpus", read_faq_items(UIT / "faq.jsonl"), args.warmup
    if args.quick:
        corpus, faq, warmup = _quick_questions()[1], _quick_faq()[0], 2
    by_tier: dict[str, list[float]] = {}
    async with throwaway_database() as workspace:
        started = time.perf_counter()
        await load_corpus(workspace, parts, corpus)
        await load_faq(workspace, parts, faq)
        load_s = time.perf_counter() - started
        answerer = Answerer(parts, workspace.sessionmaker)
        started = time.perf_counter()
        await answerer.answer(questions[0])  # the first question makes tier 1's judge
        first_s = time.perf_counter() - started
        for question in questions[:warmup]:
            await answerer.answer(question)
        for question in questions:
            started = time.perf_counter()
            answer = await answerer.answer(question)
            ms = (time.perf_counter() - started) * 1000
            by_tier.setdefault(answer.tier, []).append(ms)
            by_tier.setdefault("all", []).append(ms)
    stats = {tier: percentiles(samples) for tier, samples in sorted(by_tier.items())}
    report.data.update(
        {
            "questions": len(questions),
            "load_s": round(load_s, 1),
            "first_answer_s": round(first_s, 2),
            "latency_ms": stats,
        }
    )
    loaded = "UIT corpus and FAQ"
    if args.quick:
        loaded = f"{sum(1 for _ in corpus.iterdir())} UIT files and {len(faq)} FAQ entries"
    report.print_header(
        [
            f"{loaded} loaded in {load_s:.0f} s; the first answer (tier 1's judge "
            f"made) took {first_s:.2f} s; {len(questions)} questions timed",
        ]
    )
    rows = [
        [tier, s["n"], f"{s['p50']:.1f}", f"{s['p95']:.1f}", f"{s['p99']:.1f}", f"{s['max']:.1f}"]
        for tier, s in stats.items()
    ]
    print(markdown_table(["tier (ms)", "n", "p50", "p95", "p99", "max"], rows))
    report.finish()


if __name__ == "__main__":
    asyncio.run(main())
