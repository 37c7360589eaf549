"""Tier 1 on the UIT FAQ: precision, paraphrase coverage and false accepts as t_faq varies.

The 40 FAQ entries of uit-admissions/faq.jsonl go into a throwaway PostgreSQL; each of the 250
queries of faq_queries.jsonl is embedded and its FAQ candidates fetched once (as the answerer
does), then ``decide_faq`` runs for every t_faq from 0.80 to 0.95 in steps of 0.005, with and
without the near-miss guard and the margin. The guard gets the UIT deployment override of
bench/guard_quality.py, as the admissions office would configure it.

Scoring follows ../shared/datasets/README.md: precision over answered queries (an answer to a
query expecting none is wrong), coverage over paraphrases, false-accept rate over near_miss +
out_of_scope (an answer other than the expected id). The chosen t_faq maximises coverage with
precision >= 0.99 for the configuration the answerer runs (guard and margin on).

    .venv/bin/python bench/faq_quality.py [--dataset DIR] [--step 0.005] [--full]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from common import DATASETS, Report, bench_database, read_jsonl
from guard_quality import UIT_OVERRIDE
from retrieval_quality import (
    bench_parts,
    bench_settings,
    embed_questions,
    metric_table,
    quiet_logs,
    sweep_values,
)

from bot.faqio import read_faq_file
from bot.settings import TextSettings
from retrieval.faq import FaqCandidate, FaqDecision, decide_faq, faq_candidates
from retrieval.guard import NearMissGuard, load_guard
from retrieval.index import Indexer, ensure_index_state, upsert_faq


@dataclass(frozen=True)
class Query:
    text: str
    expected: str | None
    kind: str
    confusable: str | None


@dataclass(frozen=True)
class Config:
    name: str
    guard: bool
    margin: float


@dataclass(frozen=True)
class Rates:
    precision: float
    coverage: float
    fa: float
    fa_near: float
    fa_oos: float
    answered: int
    near_right: int  # near_miss rows answered with their (other) expected FAQ

    def row(self) -> list[object]:
        return [self.precision, self.coverage, self.fa, self.fa_near, self.fa_oos, self.answered]


def got(decision: FaqDecision) -> str | None:
    return decision.accepted.external_id if decision.accepted is not None else None


def rates(queries: Sequence[Query], decisions: Sequence[FaqDecision]) -> Rates:
    answered = right = 0
    para = para_ok = 0
    near = near_fa = oos = oos_fa = near_right = 0
    for q, d in zip(queries, decisions, strict=True):
        answer = got(d)
        if answer is not None:
            answered += 1
            right += answer == q.expected
        if q.kind == "paraphrase":
            para += 1
            para_ok += answer is not None and answer == q.expected
        elif q.kind == "near_miss":
            near += 1
            near_fa += answer is not None and answer != q.expected
            near_right += answer is not None and answer == q.expected
        else:
            oos += 1
            oos_fa += answer is not None and answer != q.expected
    return Rates(
        precision=right / answered if answered else 1.0,
        coverage=para_ok / para if para else 0.0,
        fa=(near_fa + oos_fa) / (near + oos) if near + oos else 0.0,
        fa_near=near_fa / near if near else 0.0,
        fa_oos=oos_fa / oos if oos else 0.0,
        answered=answered,
        near_right=near_right,
    )


def uit_guard() -> NearMissGuard:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "uit-guard.yaml"
        path.write_text(UIT_OVERRIDE, encoding="utf-8")
        return load_guard(TextSettings(guard_vocabulary_file=path))


def choose(curve: Sequence[tuple[float, Rates]], target: float) -> tuple[float, Rates, bool]:
    """Max coverage with precision >= target (ties: fewer false accepts, then the middle of the
    tied run of thresholds); else the best precision. The flag says whether the target was met."""
    meeting = [(t, r) for t, r in curve if r.precision >= target and r.answered]
    if not meeting:
        best = max(curve, key=lambda tr: (tr[1].precision, tr[1].coverage))
        return best[0], best[1], False
    top = max((r.coverage, -r.fa) for _, r in meeting)
    tied = [(t, r) for t, r in meeting if (r.coverage, -r.fa) == top]
    t, r = tied[len(tied) // 2]
    return t, r, True


async def collect(
    args: argparse.Namespace,
) -> tuple[list[Query], list[list[FaqCandidate]], dict[str, str]]:
    dataset: Path = args.dataset
    faq_rows = {r["id"]: r["question"] for r in read_jsonl(dataset / "faq.jsonl")}
    queries = [
        Query(r["query"], r["expected_faq"], r["kind"], r.get("confusable_with"))
        for r in read_jsonl(dataset / "faq_queries.jsonl")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        settings = bench_settings(Path(tmp))
        parts = bench_parts(settings)
        indexer = Indexer(parts.embedder, parts.processor, settings.embed_batch_size)
        async with bench_database() as (_, sessionmaker):
            async with sessionmaker.begin() as session:
                await ensure_index_state(session, indexer.embedder)
                for draft in read_faq_file(dataset / "faq.jsonl"):
                    await upsert_faq(session, indexer, draft)
            vectors = embed_questions(parts, [q.text for q in queries])
            candidates = []
            async with sessionmaker() as session:
                for vector in vectors:
                    candidates.append(await faq_candidates(session, vector, limit=5))
    return queries, candidates, faq_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=DATASETS / "uit-admissions")
    parser.add_argument("--low", type=float, default=0.80)
    parser.add_argument("--high", type=float, default=0.95)
    parser.add_argument("--step", type=float, default=0.005)
    parser.add_argument("--target", type=float, default=0.99, help="precision to reach")
    parser.add_argument("--margin", type=float, default=None, help="default: the setting's")
    parser.add_argument(
        "--full", action="store_true", help="every config's curve, not only guard+margin"
    )
    args = parser.parse_args()
    quiet_logs()
    report = Report("faq_quality")
    report.print_header()

    queries, candidates, faq_questions = asyncio.run(collect(args))
    margin = args.margin
    if margin is None:
        margin = bench_settings(Path(tempfile.gettempdir())).answer.faq_margin
    guard = uit_guard()
    configs = [
        Config("similarity only", guard=False, margin=0.0),
        Config(f"margin {margin:g}", guard=False, margin=margin),
        Config("guard", guard=True, margin=0.0),
        Config(f"guard + margin {margin:g}", guard=True, margin=margin),
    ]
    thresholds = sweep_values(args.low, args.high, args.step)

    def decide(t: float, config: Config) -> list[FaqDecision]:
        return [
            decide_faq(
                q.text,
                cands,
                threshold=t,
                margin=config.margin,
                guard=guard if config.guard else None,
            )
            for q, cands in zip(queries, candidates, strict=True)
        ]

    curves = {c.name: [(t, rates(queries, decide(t, c))) for t in thresholds] for c in configs}
    kinds = {
        k: sum(q.kind == k for q in queries) for k in ("paraphrase", "near_miss", "out_of_scope")
    }
    print(
        f"{len(faq_questions)} FAQ entries, {len(queries)} queries "
        f"({', '.join(f'{k} {n}' for k, n in kinds.items())})"
    )
    header = [
        "t_faq",
        "precision",
        "coverage",
        "false accepts",
        "FA near_miss",
        "FA oos",
        "answered",
    ]
    production = configs[-1].name
    for config in configs:
        if not args.full and config.name != production:
            continue
        print(f"\n### {config.name}\n")
        print(metric_table(header, [[f"{t:.3f}", *r.row()] for t, r in curves[config.name]]))

    print(f"\n### Best t_faq per configuration (coverage with precision >= {args.target})\n")
    rows = []
    chosen: dict[str, tuple[float, Rates, bool]] = {}
    for config in configs:
        t, r, met = choose(curves[config.name], args.target)
        chosen[config.name] = (t, r, met)
        rows.append([config.name, f"{t:.3f}", *r.row(), "yes" if met else "NO (best precision)"])
    print(metric_table(["configuration", *header, "target met"], rows))

    t, r, met = chosen[production]
    print(
        f"\nchosen t_faq = {t:.3f} ({production}): precision {r.precision:.3f}, "
        f"coverage {r.coverage:.3f}, false accepts {r.fa:.3f} (near_miss {r.fa_near:.3f}, "
        f"out_of_scope {r.fa_oos:.3f}); near_miss rows answered with their right FAQ: "
        f"{r.near_right}" + ("" if met else f" — precision {args.target} NOT reachable")
    )
    decisions = decide(t, configs[-1])
    print(f"\nfalse accepts at {t:.3f} (query | kind | got | expected | similarity):")
    for q, d in zip(queries, decisions, strict=True):
        answer = got(d)
        if answer is not None and answer != q.expected:
            sim = d.accepted.similarity if d.accepted else 0.0
            print(f"  {q.text} | {q.kind} | {answer} | {q.expected} | {sim:.3f}")
            print(f"      got:      {faq_questions.get(answer, '?')}")
            if q.expected:
                print(f"      expected: {faq_questions[q.expected]}")
    print(f"\nmissed paraphrases at {t:.3f} (query | expected | reason):")
    for q, d in zip(queries, decisions, strict=True):
        if q.kind == "paraphrase" and got(d) != q.expected:
            print(f"  {q.text} | {q.expected} | got {got(d)} | {d.reason}")
    # The guard's own errors on the candidates that passed the similarity threshold.
    unguarded = decide(t, Config("no guard", guard=False, margin=margin))
    print(f"\nwhat the guard changed at {t:.3f} (query | kind | expected | without → with guard):")
    for q, d0, d1 in zip(queries, unguarded, decisions, strict=True):
        if got(d0) != got(d1):
            good = "fixed" if got(d1) == q.expected else ("broke" if got(d0) == q.expected else "")
            print(
                f"  [{good}] {q.text} | {q.kind} | {q.expected} | "
                f"{got(d0)} → {got(d1)}: {d1.reason}"
            )
    report.data["chosen_t_faq"] = t
    report.data["target_met"] = met
    report.data["curves"] = {
        name: {f"{th:.3f}": vars(r) for th, r in curve} for name, curve in curves.items()
    }
    report.finish()


if __name__ == "__main__":
    main()
