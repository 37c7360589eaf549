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
import json
import pickle
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from common import DATASETS, Report, bench_settings, markdown_table, progress
from question_sets import QuestionSet, dev_sets, knowledge_for
from sqlalchemy import text

from bot.evaluation.data import Question, read_questions
from bot.evaluation.metrics import first_ranks, mean_metrics, ranking_metrics
from bot.evaluation.questions import relevant_units
from bot.evaluation.workspace import load_corpus, load_passages, prepare_all, throwaway_database
from bot.runtime import build_parts
from retrieval.embedders.base import embed_off_loop
from retrieval.query import question_vector
from retrieval.search.fusion import interleave
from retrieval.search.keyword import Bm25Index, bm25_index
from retrieval.text.folding import fold

KS = (1, 3, 5, 10)


@dataclass
class Query:
    dense: np.ndarray[Any, Any]  # cosine of every chunk (restored question)
    raw: np.ndarray[Any, Any]  # cosine of every chunk (the question as typed, expanded)
    bm25: np.ndarray[Any, Any]  # BM25 of every chunk
    words: int
    terms: list[str] = field(default_factory=list)


@dataclass
class Asked:
    question: Question
    restored: bool
    queries: list[Query]  # the whole question first, then its parts


@dataclass
class Corpus:
    ids: list[int]
    units: dict[str, list[Any]]  # level -> unit of each chunk (in ``ids`` order)
    texts: list[str]
    doc_terms: list[list[str]] = field(default_factory=list)  # BM25's terms of each chunk
    vectors: np.ndarray[Any, Any] | None = None  # the chunks' embeddings, normalised
    sets: dict[str, list[Asked]] = field(default_factory=dict)  # form -> questions


# -- fusions --------------------------------------------------------------------------------------

Fusion = Callable[[Query, bool], np.ndarray[Any, Any]]  # fused score of every chunk, -inf = out


def _top(scores: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    n = min(n, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    return top[np.argsort(-scores[top], kind="stable")]


def _candidates(q: Query, n: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    dense = _top(q.dense, n)
    keyword = _top(q.bm25, n)
    keyword = keyword[q.bm25[keyword] > 0]
    return dense, keyword


def single(which: str) -> Fusion:
    def fuse(q: Query, restored: bool) -> np.ndarray[Any, Any]:
        scores = q.dense if which == "dense" else np.where(q.bm25 > 0, q.bm25, -np.inf)
        return np.asarray(scores, dtype=np.float64)

    return fuse


def rrf(k: int, keyword_weight: float, n: int = 40) -> Fusion:
    def fuse(q: Query, restored: bool) -> np.ndarray[Any, Any]:
        dense, keyword = _candidates(q, n)
        out = np.full(len(q.dense), -np.inf)
        for ranking, weight in ((keyword, keyword_weight), (dense, 1 - keyword_weight)):
            for rank, i in enumerate(ranking, start=1):
                out[i] = (0 if out[i] == -np.inf else out[i]) + 2 * weight / (k + rank)
        return out

    return fuse


def _scaled(
    values: np.ndarray[Any, Any], top: np.ndarray[Any, Any], how: str
) -> np.ndarray[Any, Any]:
    own = values[top]
    if how == "z":
        mean, sd = float(own.mean()), float(own.std())
        return (values - mean) / sd if sd > 0 else np.zeros_like(values)
    low, high = float(own.min()), float(own.max())
    if high <= low:
        return (values >= high).astype(np.float64)
    return np.maximum(0.0, (values - low) / (high - low))


def score(
    alpha: float | Callable[[Query, bool], float],
    n: int = 40,
    how: str = "minmax",
    dense_of: Callable[[Query, bool], np.ndarray[Any, Any]] | None = None,
) -> Fusion:
    """α·BM25 + (1-α)·dense over the union of both top-n lists, each normalised over its own."""

    def fuse(q: Query, restored: bool) -> np.ndarray[Any, Any]:
        dense_scores = dense_of(q, restored) if dense_of else q.dense
        dense = _top(dense_scores, n)
        keyword = _top(q.bm25, n)
        keyword = keyword[q.bm25[keyword] > 0]
        a = alpha(q, restored) if callable(alpha) else alpha
        d = _scaled(dense_scores, dense, how)
        k = _scaled(q.bm25, keyword, how) if len(keyword) else np.zeros(len(q.bm25))
        if how == "z" and len(keyword):
            k = np.where(q.bm25 > 0, k, float(k[keyword].min()))
        out = np.full(len(q.dense), -np.inf)
        union = np.union1d(dense, keyword)
        out[union] = a * k[union] + (1 - a) * d[union]
        return out

    return fuse


def when_restored(base: float, unaccented: float) -> Callable[[Query, bool], float]:
    return lambda q, restored: unaccented if restored else base


def by_peak(low: float, high: float) -> Callable[[Query, bool], float]:
    """α from low to high as BM25's best pulls away from its fifth (a clear keyword winner)."""

    def alpha(q: Query, restored: bool) -> float:
        top = np.sort(q.bm25)[::-1][:5]
        if top[0] <= 0:
            return low
        gap = float((top[0] - top[-1]) / top[0])
        return low + (high - low) * min(1.0, gap / 0.5)

    return alpha


def by_length(short: float, long: float, words: int = 8) -> Callable[[Query, bool], float]:
    return lambda q, restored: short if q.words <= words else long


def max_dense(q: Query, restored: bool) -> np.ndarray[Any, Any]:
    return np.maximum(q.dense, q.raw)


def mean_dense(q: Query, restored: bool) -> np.ndarray[Any, Any]:
    return (q.dense + q.raw) / 2


FUSIONS: dict[str, Fusion] = {
    "dense": single("dense"),
    "bm25": single("bm25"),
    "rrf k60 1:1 (before)": rrf(60, 0.5),
    "rrf k60 0.7:0.3": rrf(60, 0.7),
    "rrf k60 0.8:0.2": rrf(60, 0.8),
    "rrf k20 0.7:0.3": rrf(20, 0.7),
    "score α0.5": score(0.5),
    "score α0.6": score(0.6),
    "score α0.7 (default)": score(0.7),
    "score α0.8": score(0.8),
    "score α0.7 N20": score(0.7, n=20),
    "score α0.7 N100": score(0.7, n=100),
    "score z α0.7": score(0.7, how="z"),
    "score α0.6 / 0.8 unaccented": score(when_restored(0.6, 0.8)),
    "score α 0.5-0.9 by BM25 peak": score(by_peak(0.5, 0.9)),
    "score α 0.6 short / 0.8 long": score(by_length(0.6, 0.8)),
    "score α0.7 dense max(restored, raw)": score(0.7, dense_of=max_dense),
    "score α0.7 dense mean(restored, raw)": score(0.7, dense_of=mean_dense),
}


# -- gathering ------------------------------------------------------------------------------------


async def gather(parts: Any, qs: QuestionSet, quick: bool) -> Corpus:
    asked, knowledge = knowledge_for(qs, read_questions(qs.questions), quick)
    questions = [q for q in asked if not q.out_of_scope]
    async with throwaway_database() as ws:
        if knowledge.passages is not None:
            await load_passages(ws, parts, knowledge.passages)
        elif knowledge.corpus is not None:
            await load_corpus(ws, parts, knowledge.corpus)
        async with ws.sessionmaker() as session:
            rows = (
                await session.execute(
                    text(
                        "SELECT c.id, c.external_id, c.text, c.embedding, c.keyword_text, "
                        "d.source FROM chunks c "
                        "JOIN documents d ON d.id = c.document_id ORDER BY c.id"
                    )
                )
            ).all()
            index = await bm25_index(session)
        ids = [r.id for r in rows]
        if list(index.ids) != ids:
            raise RuntimeError("the BM25 index and the chunks disagree")
        matrix = np.vstack([np.asarray(json.loads(r.embedding), dtype=np.float32) for r in rows])
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        corpus = Corpus(
            ids,
            {
                "chunk": [r.external_id for r in rows],
                "document": [Path(r.source).name for r in rows],
            },
            [" ".join(r.text.split()).lower() for r in rows],
            [r.keyword_text.split() or ["_"] for r in rows],
            matrix,
        )
        for form in ("written", "unaccented"):
            asked = [q.question if form == "written" else fold(q.question) for q in questions]
            prepared, vectors = await prepare_all(ws, parts, asked)
            raw_texts = [parts.processor.expand_query(t) for t in asked]
            raw = await embed_off_loop(parts.embedder.embed_queries, raw_texts)
            out: list[Asked] = []

            def query(vector: Any, raw_vector: Any, terms: Sequence[str], text: str) -> Query:
                return Query(
                    matrix @ vector,
                    matrix @ raw_vector,
                    index.scores(list(terms)),
                    len(text.split()),
                    list(terms),
                )

            for q, p, vs, r in zip(questions, prepared, vectors, raw, strict=True):
                queries = [query(question_vector(p, vs), r, p.terms, p.question)]
                queries += [
                    query(v, v, part.terms, part.text) for part, v in zip(p.parts, vs, strict=False)
                ]
                out.append(Asked(q, p.restored is not None, queries))
            corpus.sets[form] = out
            progress(f"{qs.name} {form}: {len(out)} questions read and scored")
    return corpus


def with_bm25(corpus: Corpus, **params: float) -> Corpus:
    """The same corpus and questions, BM25 scored with other parameters (k1, b, epsilon)."""
    index = Bm25Index(list(range(len(corpus.ids))), corpus.doc_terms, **params)
    sets = {
        form: [
            Asked(
                a.question,
                a.restored,
                [replace(q, bm25=index.scores(q.terms)) for q in a.queries],
            )
            for a in asked
        ]
        for form, asked in corpus.sets.items()
    }
    return replace(corpus, sets=sets)


def with_feedback(corpus: Corpus, beta: float, k: int) -> Corpus:
    """The dense query moved towards BM25's top ``k`` chunks (Rocchio pseudo-relevance feedback):
    q' = q + β·centroid, cosines rescaled by |q'|."""
    matrix = corpus.vectors
    if matrix is None:
        raise ValueError("the cached scores predate the stored vectors: run without --cache")

    def moved(q: Query) -> Query:
        top = _top(q.bm25, k)
        top = top[q.bm25[top] > 0]
        if not len(top):
            return q
        centroid = matrix[top].mean(axis=0)
        norm = 1 + 2 * beta * float(q.dense[top].mean()) + beta**2 * float(centroid @ centroid)
        return replace(q, dense=(q.dense + beta * (matrix @ centroid)) / np.sqrt(norm))

    sets = {
        form: [Asked(a.question, a.restored, [moved(q) for q in a.queries]) for a in asked]
        for form, asked in corpus.sets.items()
    }
    return replace(corpus, sets=sets)


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
