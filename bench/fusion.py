"""Which fusion of BM25 and the dense ranker: every candidate on every development set, both forms.

    .venv/bin/python bench/fusion.py [--datasets ../shared/datasets] [--quick]

Each set is indexed once with tuvan's own code (UIT through the pipeline, ALQAC and ViRHE4QA as
their pre-cut passages). Every in-scope question is read as the answerer reads it (restored when
typed without marks, expanded, split into its parts: ``Answerer.prepare``), asked as written and
again folded. For every query (the whole question, and each part of a multi-part one) the bench
keeps the cosine of every chunk (exact, from the stored vectors) and the BM25 score of every chunk
(the index search uses). Each fusion below is then a pure function of those two score vectors,
so all of them are compared on exactly the same inputs; a multi-part question's rankings are
interleaved as ``retrieval.search.search_parts`` does.

What is compared (MRR@10 and Hit@k at the set's level, chunk or document):

- the single rankers (dense, BM25);
- reciprocal rank fusion, equal weights (k = 60, what tuvan had) and weighted;
- normalised score fusion (min-max over each ranker's own top ``N``, weight α on BM25), at
  several α and N, and with z-scores instead of min-max;
- weights that adapt to the query: more BM25 when the question was typed without marks, or when
  the BM25 scores are peaked (a clear keyword winner), or for short questions;
- the dense side searching both the restored and the raw (folded) question, fused;
- the dense query moved towards BM25's best chunks (pseudo-relevance feedback);
- BM25's k1 and b (``--bm25``);
- and, as a bound, the better of the two single rankings picked per question.

``--cache DIR`` keeps each set's scores (a pickle of this script's own making) so that a second
run only fuses.

Prints one table per form and writes JSON to bench/results/fusion.json. ``--quick`` (a smoke run,
to fusion_quick.json): UIT and ALQAC, their first questions over only what those cite.
"""

from __future__ import annotations

import argparse
import asyncio
import pickle
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import DATASETS, Report, bench_settings, markdown_table
from fusion_corpus import Asked, Corpus, gather, with_bm25, with_feedback
from fusion_methods import FUSIONS, Fusion
from question_sets import dev_sets

from bot.evaluation.metrics import first_ranks, mean_metrics, ranking_metrics
from bot.evaluation.questions import relevant_units
from bot.runtime import build_parts
from retrieval.search.fusion import interleave

KS = (1, 3, 5, 10)


def oracle(corpus: Corpus, level: str, form: str) -> dict[str, float]:
    """The better of the two single rankings for each question: a bound no fusion of the two
    passes by picking one of them per question."""
    rows = []
    for asked in corpus.sets[form]:
        relevant = relevant_units(asked.question, level)
        if not relevant:
            continue
        best: dict[str, float] | None = None
        for which in ("dense", "bm25"):
            units = first_ranks(corpus.units[level][i] for i in rank(corpus, asked, FUSIONS[which]))
            found = ranking_metrics(units, relevant, KS)
            if best is None or found["mrr@10"] > best["mrr@10"]:
                best = found
        if best is not None:
            rows.append(best)
    return mean_metrics(rows)


BM25_PARAMS: dict[str, dict[str, float]] = {
    "k1 1.5 b 0.75 (default)": {},
    "k1 1.2 b 0.75": {"k1": 1.2},
    "k1 0.9 b 0.4": {"k1": 0.9, "b": 0.4},
    "k1 1.2 b 0.5": {"k1": 1.2, "b": 0.5},
    "k1 1.5 b 0.5": {"k1": 1.5, "b": 0.5},
    "k1 1.5 b 0.9": {"k1": 1.5, "b": 0.9},
    "k1 2.0 b 0.75": {"k1": 2.0},
    "k1 1.2 b 0.9": {"k1": 1.2, "b": 0.9},
}


def rank(corpus: Corpus, asked: Asked, fusion: Fusion, depth: int = 50) -> list[int]:
    rankings = []
    for q in asked.queries:
        fused = fusion(q, asked.restored)
        order = [int(i) for i in np.argsort(-fused, kind="stable")[:depth] if fused[i] > -np.inf]
        seen: set[str] = set()
        kept = []
        for i in order:  # repeated texts dropped (retrieval.search.distinct)
            if corpus.texts[i] not in seen:
                seen.add(corpus.texts[i])
                kept.append(i)
        rankings.append(kept)
    return rankings[0] if len(rankings) == 1 else interleave(rankings)


def evaluate(corpus: Corpus, level: str, form: str, fusion: Fusion) -> dict[str, float]:
    rows = []
    for asked in corpus.sets[form]:
        relevant = relevant_units(asked.question, level)
        if not relevant:
            continue
        units = first_ranks(corpus.units[level][i] for i in rank(corpus, asked, fusion))
        rows.append(ranking_metrics(units, relevant, KS))
    return mean_metrics(rows)


async def main(argv: Sequence[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument(
        "--quick", action="store_true", help="a smoke run: UIT and ALQAC, a few questions"
    )
    ap.add_argument("--cache", type=Path, help="keep each set's scores here for the next run")
    ap.add_argument("--bm25", action="store_true", help="also sweep BM25's k1 and b")
    args = ap.parse_args(argv)
    parts = build_parts(bench_settings())
    report = Report("fusion" + ("_quick" if args.quick else ""))
    report.print_header()
    results: dict[str, Any] = {}
    for qs in dev_sets(args.datasets):
        if qs.questions is None or (args.quick and qs.name not in ("UIT", "ALQAC")):
            continue  # an FAQ set only (UTEHY); quick: one folder, one set of passages
        cached = (
            args.cache / f"{qs.name}{'-quick' if args.quick else ''}.pickle" if args.cache else None
        )
        if cached is not None and cached.exists():
            corpus = pickle.loads(cached.read_bytes())
        else:
            corpus = await gather(parts, qs, args.quick)
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                cached.write_bytes(pickle.dumps(corpus))
        level = "chunk" if qs.chunks is not None else "document"
        results[qs.name] = {
            form: {name: evaluate(corpus, level, form, f) for name, f in FUSIONS.items()}
            for form in ("written", "unaccented")
        }
        results[qs.name]["level"] = level
        for form in ("written", "unaccented"):
            results[qs.name][form]["oracle: the better single ranker per question"] = oracle(
                corpus, level, form
            )
        for beta, k in ((0.3, 3), (0.5, 3), (0.5, 5)):
            moved = with_feedback(corpus, beta, k)
            for form in ("written", "unaccented"):
                for name in ("dense", "score α0.7 (default)"):
                    results[qs.name][form][f"{name} · BM25 feedback β{beta} top {k}"] = evaluate(
                        moved, level, form, FUSIONS[name]
                    )
        if args.bm25:
            for label, params in BM25_PARAMS.items():
                swept = with_bm25(corpus, **params)
                for form in ("written", "unaccented"):
                    for name in ("bm25", "score α0.7 (default)"):
                        results[qs.name][form][f"{name} · {label}"] = evaluate(
                            swept, level, form, FUSIONS[name]
                        )
    report.data["results"] = results
    names = list(results)
    compared = list(results[names[0]]["written"])
    for metric in ("mrr@10", "hit@5", "hit@10"):
        header = ["fusion"] + [f"{n} {f[0]}" for n in names for f in ("written", "unaccented")]
        rows = []
        for fusion in compared:
            values = [
                results[n][f][fusion][metric] for n in names for f in ("written", "unaccented")
            ]
            rows.append([fusion, *(f"{v:.3f}" for v in values)])
        print(f"### {metric} (w: as written, u: without diacritics)\n")
        print(markdown_table(header, rows) + "\n")
    # The worst margin to the best single ranker, per fusion, over every set and form.
    rows = []
    for fusion in compared:
        margins = [
            results[n][f][fusion]["mrr@10"]
            - max(results[n][f]["dense"]["mrr@10"], results[n][f]["bm25"]["mrr@10"])
            for n in names
            for f in ("written", "unaccented")
        ]
        mean = statistics.fmean(
            results[n][f][fusion]["mrr@10"] for n in names for f in ("written", "unaccented")
        )
        rows.append([fusion, f"{min(margins):+.3f}", f"{mean:.3f}"])
    print("### MRR@10 against the best single ranker (worst set and form), and the mean\n")
    print(markdown_table(["fusion", "worst margin", "mean MRR@10"], rows))
    report.finish()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
