"""search_latency's data: the real questions it asks, the 100,000-row store it builds from the
real corpora (indexes dropped for the load, rebuilt and timed), and how a hit maps back to the
real document its row was made from."""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_embeddings import cached_embeddings
from common import DATASETS, copy_rows, create_indexes, drop_indexes, progress, read_jsonl
from search_corpus import load_documents, real_chunks, synthetic_rows
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.core.settings import Settings

INDEXES = ("ix_chunks_embedding_hnsw", "ix_chunks_tsv")


CORPORA = ("uit-admissions/corpus", "ptit-admissions/corpus", "alqac")


@dataclass
class Question:
    text: str
    expected: frozenset[str]  # document keys; empty for out-of-scope questions
    vector: Any = None
    terms: list[str] | None = None
    embed_ms: float = 0.0
    prepared: Any = None  # retrieval.query.PreparedQuery: restored, expanded, split
    vectors: Any = None  # what prepared.dense_texts embedded


def load_questions(limit: int | None, *, uit_only: bool = False) -> list[Question]:
    uit = [
        Question(r["question"], frozenset(s["source"] for s in r["sources"]))
        for r in read_jsonl(DATASETS / "uit-admissions/questions.jsonl")
    ]
    alqac = [
        Question(r["question"], frozenset(r["relevant_ids"]))
        for r in read_jsonl(DATASETS / "alqac/questions.jsonl")
    ]
    if uit_only:
        return uit[:limit]
    if limit is not None and limit < len(uit) + len(alqac):
        k = max(1, round(limit * len(uit) / (len(uit) + len(alqac))))
        return uit[:k] + alqac[: limit - k]
    return uit + alqac


def hit_rate(hits: list[bool | None]) -> float:
    judged = [h for h in hits if h is not None]
    return sum(judged) / len(judged) if judged else float("nan")


def rss_bytes() -> int:
    """Resident memory of this process now (Linux)."""
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def doc_key(source: str) -> str:
    """The unit relevance is judged by: the UIT file name, the ALQAC article id."""
    return source.removeprefix("alqac/") if source.startswith("alqac/") else Path(source).name


async def build_store(
    engine: AsyncEngine,
    settings: Settings,
    parts: Any,
    corpora: tuple[str, ...],
    rows: int,
    max_real: int | None,
    maintenance_work_mem: str,
) -> tuple[dict[str, Any], list[str]]:
    """Load the store; return facts about it and, per chunk id - 1, its real document's key."""
    embedder, processor = parts.embedder, parts.processor
    t0 = time.perf_counter()
    docs, skipped = load_documents(corpora)
    chunks = real_chunks(docs, embedder, processor)[:max_real]
    t1 = time.perf_counter()
    vectors = cached_embeddings(
        embedder.embed_passages,
        [c.search_text for c in chunks],
        key=embedder.name.replace(":", "-") + "-passage",
        batch=64,
    )
    t2 = time.perf_counter()
    documents, chunk_rows, facts = synthetic_rows(docs, chunks, vectors, processor, rows)
    t3 = time.perf_counter()
    defs = await drop_indexes(engine, INDEXES)
    await copy_rows(
        engine,
        "documents",
        ("id", "source", "title", "url", "language", "content_hash"),
        ("int4", "text", "text", "text", "varchar", "varchar"),
        documents,
    )
    await copy_rows(
        engine,
        "chunks",
        (
            "id",
            "document_id",
            "ordinal",
            "page",
            "heading_path",
            "text",
            "keyword_text",
            "embedding",
            "token_count",
        ),
        ("int4", "int4", "int4", "int4", "text", "text", "text", "vector", "int4"),
        chunk_rows,
    )
    t4 = time.perf_counter()
    progress(f"{len(chunk_rows):,} chunks loaded with COPY; building indexes")
    del chunk_rows
    builds = await create_indexes(engine, defs, maintenance_work_mem=maintenance_work_mem)
    async with engine.begin() as conn:
        for table in ("documents", "chunks"):
            await conn.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"  # noqa: E501
                )
            )
        count = (await conn.execute(text("SELECT count(*) FROM chunks"))).scalar_one()
        sizes = (
            await conn.execute(
                text(
                    "SELECT pg_size_pretty(pg_total_relation_size('chunks')), "
                    "pg_size_pretty(pg_relation_size('ix_chunks_embedding_hnsw')), "
                    "pg_size_pretty(pg_relation_size('ix_chunks_tsv'))"
                )
            )
        ).one()
    keys = [doc_key(docs[chunks[i].doc].source) for i in facts.pop("source_of")]
    facts.update(
        {
            "rows": count,
            "documents": len(documents),
            "corpora": corpora,
            "skipped_files": skipped,
            "sizes": {"table": sizes[0], "hnsw": sizes[1], "gin": sizes[2]},
            "chunking_s": round(t1 - t0, 1),
            "passage_embedding_s": round(t2 - t1, 1),
            "synthesis_s": round(t3 - t2, 1),
            "copy_s": round(t4 - t3, 1),
            "index_builds": builds,
            "maintenance_work_mem": maintenance_work_mem,
        }
    )
    return facts, keys
