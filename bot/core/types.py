"""The names tuvan's layers pass between them, each written once."""

from __future__ import annotations

from typing import Literal, get_args

Language = Literal["vi", "en"]
Tier = Literal["faq", "documents", "fallback"]  # which tier answered

Channel = Literal["telegram", "messenger", "zalo", "web"]
CHANNELS: tuple[Channel, ...] = get_args(Channel)

# How tier 2 searches the chunks (TUVAN_SEARCH__MODE).
SearchMode = Literal[
    "dense", "keyword", "bm25", "hybrid", "hybrid+rerank", "summary", "hybrid+graph"
]

# How a document is cut into chunks (TUVAN_INGEST__CHUNKER): one chunker, or "auto" to choose
# by the document (a regulation gets the legal chunker).
Chunker = Literal["structure", "markdown", "legal", "semantic"]
ChunkerMode = Literal["auto", "structure", "markdown", "legal", "semantic"]
CHUNKER_MODES: tuple[ChunkerMode, ...] = get_args(ChunkerMode)
