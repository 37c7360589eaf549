"""The test session's fixture embeddings, kept on disk: the demo knowledge base and the other
texts the session's ``indexer`` embeds take most of a minute of CPU to embed on this kind of
machine, once per pytest-xdist worker and once per run.

``CachedEmbedder`` wraps the real embedder: a text it has embedded before (same model, same
kind, same text) is read from ``tests/.embeddings/`` (not in git), a new one is embedded by the
real model and kept. The workers share the folder under a file lock held while they embed, so
each text is embedded once by whichever worker asks first while the other waits and reads it.
Vectors come back bit for bit as the model gave them: the answers tested are the model's own.
The answering side (``parts.embedder``, questions asked at answer time) is not cached.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from retrieval.embedders.base import Embedder, FloatArray

CACHE_DIR = Path(__file__).resolve().parent / ".embeddings"


class CachedEmbedder:
    """``inner``, with every embedding it makes kept in ``folder``."""

    def __init__(self, inner: Embedder, folder: Path = CACHE_DIR) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.folder = folder

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        return self._cached("query", texts, self.inner.embed_queries)

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        return self._cached("passage", texts, self.inner.embed_passages)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _cached(
        self, kind: str, texts: Sequence[str], embed: Callable[[Sequence[str]], FloatArray]
    ) -> FloatArray:
        if not texts:
            return embed(texts)
        paths = [self._path(kind, text) for text in texts]
        with self._locked():
            missing = sorted({i for i, p in enumerate(paths) if not p.exists()})
            if missing:
                fresh = embed([texts[i] for i in missing])
                for i, vector in zip(missing, fresh, strict=True):
                    _write(paths[i], vector)
        return np.stack([np.load(p) for p in paths]).astype(np.float32)

    def _path(self, kind: str, text: str) -> Path:
        key = hashlib.sha256(f"{self.name}\0{kind}\0{text}".encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.npy"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _write(path: Path, vector: FloatArray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
    np.save(tmp, vector)
    tmp.replace(path)
