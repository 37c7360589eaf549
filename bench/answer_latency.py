"""Whole-answer latency, by the tier that answered: what a student waits for, LLM excluded.

The UIT corpus and its FAQ are loaded into a throwaway database; then every UIT question
(questions.jsonl) and every FAQ query (faq_queries.jsonl), as written and folded (no
diacritics), is answered by ``Answerer.answer`` exactly as a channel calls it: read, restore,
embed, tier 1 (the fitted judge, made by the first question), tier 2 (search, compose, the
documents scorer), fallback. Each answer's wall time is recorded under its tier. The script
uses only what every commit since 6/6 has, so it runs against an earlier commit from a worktree
with the same venv (``PYTHONPATH=<worktree> .venv/bin/python bench/answer_latency.py``), for
side-by-side pairs (issue 1/4: the documents answer's p95 within +15 % of the commit before).

    .venv/bin/python bench/answer_latency.py [--quick] [--warmup 10]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from common import DATASETS, Report, bench_settings, markdown_table, percentiles, read_jsonl

from bot.answer.answerer import Answerer
from bot.evaluation.data import read_faq_items
from bot.evaluation.workspace import load_corpus, load_faq, throwaway_database
from bot.runtime import build_parts
from retrieval.text.folding import fold

UIT = DATASETS / "uit-admissions"


def _questions(quick: bool) -> list[str]:
    asked = [r["question"] for r in read_jsonl(UIT / "questions.jsonl")]
    asked += [r["query"] for r in read_jsonl(UIT / "faq_queries.jsonl")]
    if quick:
        asked = asked[:: max(1, len(asked) // 20)][:20]
    return [form for q in asked for form in (q, fold(q))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 questions, written and folded")
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    report = Report("answer_latency" + ("_quick" if args.quick else ""))
    settings = bench_settings()
    parts = build_parts(settings)
    questions = _questions(args.quick)
    by_tier: dict[str, list[float]] = {}
    async with throwaway_database() as workspace:
        started = time.perf_counter()
        await load_corpus(workspace, parts, UIT / "corpus")
        await load_faq(workspace, parts, read_faq_items(UIT / "faq.jsonl"))
        load_s = time.perf_counter() - started
        answerer = Answerer(parts, workspace.sessionmaker)
        started = time.perf_counter()
        await answerer.answer(questions[0])  # the first question makes tier 1's judge
        first_s = time.perf_counter() - started
        for question in questions[: args.warmup]:
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
    report.print_header(
        [
            f"UIT corpus and FAQ loaded in {load_s:.0f} s; the first answer (tier 1's judge "
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
