"""Tier 1's decision settings on every dev FAQ set, as written and folded (2/6).

    .venv/bin/python bench/faq_tier.py [--datasets ../shared/datasets]

Each dev FAQ set (UIT, ViRHE4QA) is loaded into a throwaway database and every query is read,
embedded and given its candidates exactly as the answerer does it (bot.evaluation.faq), once
as written and once folded. Then only ``decide_faq`` is re-run for every combination of

- ``t_faq`` (the dense similarity the first entry the guard lets through must reach),
- ``faq_min_coverage`` (the share of the question's words that entry must hold),
- ``faq_margin`` (its lead on the fused score over the best entry with another answer),

with the near-miss guard on. The settings are one for all sets: each row is judged by its worst
set and form. Printed: the rows with the best worst-case coverage at each worst-case precision
(0.95 to 0.99), and the row of the defaults. Then, per set and for the demo FAQ: every stored
question asked word for word (it must answer its own entry), and the FAQ self-check
(bot.knowledge.faq_check: the same phrasings asked as a student would type them).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from common import DATASETS, Report, bench_settings, markdown_table
from devsets import dev_sets

from bot.answer.answerer import Answerer
from bot.evaluation.data import FaqQuery, read_faq_items, read_faq_queries
from bot.evaluation.faq import QueryCandidates, query_candidates
from bot.evaluation.metrics import FaqRates, faq_rates
from bot.evaluation.workspace import load_faq, throwaway_database
from bot.knowledge.demo import demo_kb_dir
from bot.knowledge.faq_check import check_entries
from bot.runtime import build_parts
from retrieval.faq.decision import decide_faq
from retrieval.text.folding import fold
from retrieval.thresholds import resolve_thresholds

T_FAQ = [round(0.80 + 0.01 * i, 2) for i in range(16)]
COVERAGE = [0.0, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8]
MARGIN = [0.0, 0.02, 0.05, 0.1]
LEVELS = (0.95, 0.97, 0.98, 0.99)

Case = tuple[str, list[FaqQuery], QueryCandidates]


async def cases(datasets: Path, checks: list[list[Any]] | None = None) -> list[Case]:
    parts = build_parts(bench_settings())
    out: list[Case] = []
    faq_sets = [(qs.name, qs.faq, qs.faq_queries) for qs in dev_sets(datasets) if qs.faq]
    for name, faq, faq_queries in [*faq_sets, ("demo", demo_kb_dir() / "faq.jsonl", None)]:
        items = read_faq_items(faq)
        async with throwaway_database() as workspace:
            await load_faq(workspace, parts, items)
            if checks is not None:
                checks.append([name, *await self_check(parts, workspace, items)])
            if faq_queries is None:
                continue
            queries = read_faq_queries(faq_queries, {i.id for i in items})
            for form in ("written", "folded"):
                asked = (
                    queries
                    if form == "written"
                    else [replace(q, query=fold(q.query)) for q in queries]
                )
                found = await query_candidates(workspace, parts, asked, None)
                out.append((f"{name} {form}", asked, found))
    return out


async def self_check(parts: Any, workspace: Any, items: Sequence[Any]) -> list[Any]:
    """Stored phrasings asked word for word that answer their own entry, and the self-check."""
    answerer = Answerer(parts, workspace.sessionmaker)
    own = total = 0
    async with workspace.sessionmaker() as session:
        for item in items:
            for phrasing in (item.question, *item.variants):
                decision = await answerer.match_faq(
                    session, *await answerer.read(session, phrasing)
                )
                total += 1
                own += decision.accepted is not None and decision.accepted.external_id == item.id
        report = await check_entries(answerer, session)
    return [
        f"{own}/{total}",
        report.count("unanswered"),
        report.count("other_entry"),
        report.count("confusable"),
        report.count("guard"),
    ]


def rates(case: Case, guard: Any, t: float, coverage: float, margin: float) -> FaqRates:
    _, queries, found = case
    answers = []
    for read, cands in zip(found.read, found.candidates, strict=True):
        decision = decide_faq(
            read,
            cands,
            threshold=t,
            margin=margin,
            guard=guard,
            min_coverage=coverage,
        )
        answers.append(decision.accepted.external_id if decision.accepted else None)
    return faq_rates(queries, answers)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    args = parser.parse_args(argv)
    report = Report("faq_tier")
    settings = bench_settings()
    defaults = (settings.answer.t_faq, settings.answer.faq_min_coverage, settings.answer.faq_margin)
    parts = build_parts(settings)
    report.print_header(
        [f"defaults: min coverage {defaults[1]}, margin {defaults[2]} (t_faq: the embedder's)"]
    )
    checks: list[list[Any]] = []
    found = asyncio.run(cases(args.datasets, checks))
    names = [c[0] for c in found]
    grid = []
    for t, cov, margin in itertools.product(T_FAQ, COVERAGE, MARGIN):
        grid.append(((t, cov, margin), [rates(c, parts.guard, t, cov, margin) for c in found]))
    header = (
        ["t_faq", "min coverage", "margin"]
        + [f"{n} p/c/fa" for n in names]
        + ["worst precision", "worst coverage"]
    )

    def row(key: tuple[float, float, float], rs: list[FaqRates]) -> list[Any]:
        return (
            [*key]
            + [f"{r.precision:.3f}/{r.coverage:.3f}/{r.false_accept:.3f}" for r in rs]
            + [f"{min(r.precision for r in rs):.3f}", f"{min(r.coverage for r in rs):.3f}"]
        )

    rows = []
    for level in LEVELS:
        meeting = [g for g in grid if min(r.precision for r in g[1]) >= level]
        meeting.sort(key=lambda g: (-min(r.coverage for r in g[1]), -g[0][0]))
        rows += [[f"≥ {level}", *row(*g)] for g in meeting[:2]]
    print(markdown_table(["worst precision", *header], rows))
    report.data["frontier"] = rows
    report.data["grid"] = [
        {
            "t_faq": k[0],
            "min_coverage": k[1],
            "margin": k[2],
            **{n: r.as_dict() for n, r in zip(names, rs, strict=True)},
        }
        for k, rs in grid
    ]
    t_default = resolve_thresholds(settings.answer, parts.embedder.name, None).t_faq
    current = [rates(c, parts.guard, t_default, defaults[1], defaults[2]) for c in found]
    print("\nDefaults:\n")
    print(markdown_table(header, [row((t_default, defaults[1], defaults[2]), current)]))
    report.data["defaults"] = row((t_default, defaults[1], defaults[2]), current)
    print("\nStored phrasings and the self-check:\n")
    print(
        markdown_table(
            [
                "FAQ",
                "asked word for word: own entry",
                "self-check: not answered by its entry",
                "answered by another entry",
                "confusable with another entry",
                "refused by the guard",
            ],
            checks,
        )
    )
    report.data["self_check"] = checks
    report.finish()


if __name__ == "__main__":
    sys.exit(main())
