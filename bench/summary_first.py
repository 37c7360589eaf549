"""Search mode "summary" on a corpus, without an LLM: what can be measured here.

No LLM is reachable, so URAG-D's own summaries cannot be made. Measured instead:

1. mode "summary" with no summaries at all, beside "hybrid" (it must rank exactly the same);
2. mode "summary" over *extractive* summaries (`tuvan augment --extractive-summaries`: each
   document's title, opening lines and headings; no LLM) — a baseline, not URAG-D — with the
   document-rank weight and the number of documents kept varied;
3. the whole answerer (key facts, tiers) in "hybrid" and in "summary" over those summaries.

    export TUVAN_TEXT__GUARD_VOCABULARY_FILE=bench/uit-guard.yaml
    .venv/bin/python bench/summary_first.py [/work/shared/datasets/uit-admissions] [--quick]

Prints one table; nothing is written. ``--quick`` (a smoke run): the set's first questions over
only the files they cite.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from common import DATASETS
from small_sets import small_corpus

import retrieval.search.summary
from bot.core.settings import Settings
from bot.evaluation.answer_summaries import key_facts_summary, out_of_scope_summary, tier_counts
from bot.evaluation.data import read_questions
from bot.evaluation.metrics import mean_metrics
from bot.evaluation.questions import answer_all, rank_questions
from bot.evaluation.workspace import indexer_for, load_corpus, throwaway_database
from bot.knowledge.document_augment import DocumentAugmentOptions
from bot.knowledge.extractive_summaries import ExtractiveSummaryJob
from bot.runtime import build_parts

UIT = DATASETS / "uit-admissions"
KS = (1, 3, 5, 10)


def document_metrics(ranked: Any, mode: str) -> dict[str, float]:
    return mean_metrics(list(ranked[mode].per_question.get("document", {}).values()))


def row(label: str, m: dict[str, float]) -> str:
    cells = " | ".join(f"{m.get(k, float('nan')):.3f}" for k in ("hit@1", "hit@5", "mrr@10"))
    return f"| {label} | {cells} |"


async def main(dataset: Path, quick: bool) -> None:
    parts = build_parts(Settings())
    questions = read_questions(dataset / "questions.jsonl")
    corpus = dataset / "corpus"
    if quick:
        questions, corpus = small_corpus(questions, corpus)
    print(f"{len(questions)} questions, corpus {corpus}")
    lines = ["| ranking (document level) | Hit@1 | Hit@5 | MRR@10 |", "|---|---|---|---|"]
    async with throwaway_database() as workspace:
        started = time.perf_counter()
        chunks, _ = await load_corpus(workspace, parts, corpus)
        print(f"indexed {chunks} chunks in {time.perf_counter() - started:.0f} s")
        levels = ["document"]
        ranked = await rank_questions(
            workspace, parts, questions, ["hybrid", "summary"], levels, KS, None
        )
        same = all(
            ranked["hybrid"].per_question["document"][q] == m
            for q, m in ranked["summary"].per_question["document"].items()
        )
        lines.append(row("hybrid", document_metrics(ranked, "hybrid")))
        lines.append(
            row(
                f"summary, no summaries (same as hybrid: {same})",
                document_metrics(ranked, "summary"),
            )
        )
        job = ExtractiveSummaryJob(
            workspace.sessionmaker, indexer_for(parts), DocumentAugmentOptions()
        )
        report = await job.run()
        print(f"wrote {report.summaries} extractive summaries")
        for documents in (5, 3):
            for weight in (0.0, 1.0, 2.0, 1000.0):
                retrieval.search.summary.SUMMARY_DOCUMENTS = documents
                retrieval.search.summary.SUMMARY_DOCUMENT_WEIGHT = weight
                variant = await rank_questions(
                    workspace, parts, questions, ["summary"], levels, KS, None
                )
                label = f"summary, extractive, ≥{documents} documents, document weight {weight:g}"
                lines.append(row(label, document_metrics(variant, "summary")))
        retrieval.search.summary.SUMMARY_DOCUMENTS = 5
        retrieval.search.summary.SUMMARY_DOCUMENT_WEIGHT = 1.0
        answers = []
        for mode in ("hybrid", "summary"):
            search = parts.settings.search.model_copy(update={"mode": mode})
            moded = replace(parts, settings=parts.settings.model_copy(update={"search": search}))
            outcomes = await answer_all(workspace, moded, questions, None, None)
            facts = key_facts_summary(outcomes)
            scope = out_of_scope_summary(outcomes)
            answers.append(
                f"| {mode} | {tier_counts(outcomes)} | {facts['rate']:.3f} | "
                f"{facts['rate_answered']:.3f} | {scope['fallback']}/{scope['questions']} |"
            )
    print("\n".join(lines))
    print("\n| answers in mode | tiers | key facts (all) | key facts (answered) | out of scope |")
    print("|---|---|---|---|---|")
    print("\n".join(answers))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "dataset",
        type=Path,
        nargs="?",
        default=UIT,
        help=f"a folder with questions.jsonl and corpus/ (default {UIT})",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: a few questions")
    args = parser.parse_args()
    asyncio.run(main(args.dataset, args.quick))
