"""Worker throughput (issue 3/4): FAQ-tier answers per second by one worker process, the way
the results week loads it: each question once (every question embedded), and a results week's
mix (four times as many, drawn with a Zipf law: a few questions asked by very many students, in
the same words), each round starting with no question seen before.

The demo knowledge base and FAQ are loaded into a throwaway database; then every demo FAQ
question and its phrasings (as written and folded) are put in the inbox at once, each from a
visitor of its own (one conversation each, as thousands of students write), and one ``Worker``
(``TUVAN_WORKER__CONCURRENCY``, 4 by default) answers until the inbox is empty. Reported: the
questions, the seconds from the first claim to the last answer, answers per second, and how
many calls of the model embedded the questions (where the commit has ``QueryBatcher``). The
script uses only what the worker has had since 5/6, so it runs against an earlier commit from a
worktree with the same venv (``PYTHONPATH=<worktree> .venv/bin/python
bench/worker_throughput.py``), for side-by-side pairs on one machine.

    .venv/bin/python bench/worker_throughput.py [--quick] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
import uuid
from pathlib import Path

from common import Report, bench_settings, markdown_table
from cpu import postgres_cpu, process_cpu, thread_cpu
from sqlalchemy import text

from bot.answer.answerer import Answerer
from bot.conversations.store import record_inbound
from bot.core.messages import InboundMessage
from bot.evaluation.data import read_faq_items
from bot.evaluation.workspace import load_corpus, load_faq, throwaway_database
from bot.runtime import build_parts
from bot.worker.loop import Worker
from retrieval.text.folding import fold

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "bot" / "knowledge" / "demo_kb"


def _questions(quick: bool) -> list[str]:
    asked: list[str] = []
    for line in (DEMO / "faq.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            asked += [row["question"], *row.get("variants", [])]
    if quick:
        asked = asked[:12]
    return [form for q in asked for form in (q, fold(q))]


def _results_week(questions: list[str], per_question: int = 4, seed: int = 7) -> list[str]:
    """As many questions as ``per_question`` rounds of ``questions``, drawn the way students ask
    in the results week: a few questions by very many, most by a few (weights 1/rank, a
    Zipf law; the ranks shuffled with ``seed``), each from a visitor of its own."""
    rng = random.Random(seed)
    ranked = questions[:]
    rng.shuffle(ranked)
    weights = [1 / (rank + 1) for rank in range(len(ranked))]
    return rng.choices(ranked, weights, k=per_question * len(questions))


def _forget_questions(parts: object) -> None:
    """A cold start: the vectors of questions asked before are dropped, where the commit keeps
    them (``QueryBatcher.forget``; an older commit keeps none)."""
    batcher = getattr(parts, "_queries", None)
    forget = getattr(batcher, "forget", None)
    if forget is not None:
        forget()


async def _round(workspace: object, parts: object, questions: list[str]) -> dict[str, float]:
    sm = workspace.sessionmaker  # type: ignore[attr-defined]
    async with sm.begin() as session:
        for question in questions:
            await record_inbound(
                session,
                InboundMessage(
                    channel="web",
                    event_id=uuid.uuid4().hex,
                    external_user_id=f"bench-{uuid.uuid4().hex[:12]}",
                    kind="text",
                    text=question,
                ),
            )
    worker = Worker(parts.settings, sm, Answerer(parts, sm), {}, http=None)  # type: ignore[attr-defined, arg-type]
    batcher = getattr(parts, "_queries", None)
    calls_before = batcher.calls if batcher is not None else 0
    tasks: set[asyncio.Task[None]] = set()
    async with sm() as session:
        pg_before = await postgres_cpu(session)
    main_before, all_before = thread_cpu(), process_cpu()
    started = time.perf_counter()
    while True:
        did = await worker.step(tasks)
        if not did and not tasks:
            break
        if not did:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    seconds = time.perf_counter() - started
    main_s, all_s = thread_cpu() - main_before, process_cpu() - all_before
    async with sm() as session:
        pg_s = await postgres_cpu(session) - pg_before
        answered = (
            await session.execute(
                text("SELECT count(*) FROM messages WHERE direction = 'in' AND status = 'answered'")
            )
        ).scalar_one()
        faq = (
            await session.execute(
                text("SELECT count(*) FROM messages WHERE direction = 'out' AND tier = 'faq'")
            )
        ).scalar_one()
        await session.execute(text("DELETE FROM messages"))
        await session.commit()
    batcher = getattr(parts, "_queries", None)
    calls = (batcher.calls - calls_before) if batcher is not None else None
    return {
        "questions": len(questions),
        "answered": int(answered),
        "faq_tier": int(faq),
        "seconds": round(seconds, 2),
        "per_second": round(len(questions) / seconds, 1),
        "model_calls": calls if calls is not None else -1,
        # CPU per answer: the event loop's thread (one core at most), the whole worker process
        # (the embedding model's threads too) and PostgreSQL; comparable on a busy machine
        "loop_cpu_ms": round(1000 * main_s / len(questions), 1),
        "worker_cpu_ms": round(1000 * all_s / len(questions), 1),
        "postgres_cpu_ms": round(1000 * pg_s / len(questions), 1),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="12 questions, written and folded")
    parser.add_argument("--rounds", type=int, default=2, help="rounds after a warm-up one")
    args = parser.parse_args()
    report = Report("worker_throughput" + ("_quick" if args.quick else ""))
    parts = build_parts(bench_settings())
    questions = _questions(args.quick)
    week = _results_week(questions)
    rounds = []
    async with throwaway_database() as workspace:
        if not args.quick:  # the FAQ answers; the documents only make the knowledge realistic
            await load_corpus(workspace, parts, DEMO / "docs")
        await load_faq(workspace, parts, read_faq_items(DEMO / "faq.jsonl"))
        await _round(workspace, parts, questions[:8])  # warm-up: the judge, the pools
        for _ in range(1 if args.quick else args.rounds):
            for workload, asked in (("each once", questions), ("results week", week)):
                _forget_questions(parts)  # every round starts with no question seen
                rounds.append({"workload": workload, **await _round(workspace, parts, asked)})
    report.data["rounds"] = rounds
    report.print_header(
        [f"one worker, concurrency {parts.settings.worker.concurrency}, {len(questions)} questions"]
    )
    rows = [
        [n // 2 + 1, r["workload"], r["questions"], r["answered"], r["faq_tier"], r["seconds"],
         r["per_second"], r["model_calls"], r["loop_cpu_ms"], r["worker_cpu_ms"],
         r["postgres_cpu_ms"]]
        for n, r in enumerate(rounds)
    ]  # fmt: skip
    print(
        markdown_table(
            [
                "round",
                "questions asked",
                "questions",
                "answered",
                "tier 1",
                "seconds",
                "answers/s",
                "model calls",
                "loop CPU ms/answer",
                "worker CPU ms/answer",
                "PostgreSQL CPU ms/answer",
            ],
            rows,
        )
    )
    report.finish()


if __name__ == "__main__":
    asyncio.run(main())
