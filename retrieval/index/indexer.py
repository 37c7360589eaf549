"""`Indexer`: what indexing needs, the embedder and the keyword-text processor."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bot.core.types import ChunkerMode
from retrieval.embedders.base import Embedder, embed_off_loop
from retrieval.guard.checks import NearMissGuard
from retrieval.text.terms import TextProcessor

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Indexer:
    """What indexing needs: the embedder and the keyword-text processor."""

    embedder: Embedder
    processor: TextProcessor
    batch_size: int = 32
    # Which chunker cuts a document (retrieval.chunking.chunk_for): "auto" picks the
    # regulation chunker for documents with Chương/Điều structure, AUTO_CHUNKER else.
    chunker: ChunkerMode = "auto"
    # Prepend "title › headings (trang N)" to each chunk for embedding and keyword search.
    context_header: bool = True
    # The vocabulary a document's tables are read by (retrieval.facts); the bundled one if None.
    guard: NearMissGuard | None = None
    # New values read from tables wait for staff (TUVAN_INGEST__FACTS_REVIEW).
    facts_review: bool = False

    async def passages(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray[Any, Any]:
        """Embed passages in batches, off the event loop (the models are CPU-bound)."""
        return await self._embed(self.embedder.embed_passages, texts, progress)

    async def questions(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray[Any, Any]:
        """Embed FAQ questions and variants as written, as *queries* (e5's "query: "): a
        question then meets its own phrasings best (docs/benchmarks.md, "How stored FAQ texts
        are embedded")."""
        return await self._embed(self.embedder.embed_queries, texts, progress)

    async def _embed(
        self,
        embed: Callable[[list[str]], np.ndarray[Any, Any]],
        texts: Sequence[str],
        progress: Progress | None,
    ) -> np.ndarray[Any, Any]:
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            parts.append(await embed_off_loop(embed, batch))
            if progress:
                progress(len(batch))
        if not parts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        return np.vstack(parts)
