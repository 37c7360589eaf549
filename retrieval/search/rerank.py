"""Optional cross-encoder reranking (sentence-transformers) from a local model path.

Off by default: no reranker weights can be installed from a package here, so an operator points
``TUVAN_SEARCH__RERANKER_PATH`` at a downloaded model (e.g. a multilingual MS MARCO cross-encoder).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.core.errors import RetrievalError
from retrieval.offline import use_offline_models
from retrieval.search.hits import Hit


class Reranker:
    """A cross-encoder that re-scores hits against the question, on the CPU."""

    def __init__(self, path: Path) -> None:
        if not path.exists():
            raise RetrievalError(f"reranker model not found at {path}")
        use_offline_models()
        from sentence_transformers import CrossEncoder

        self._model: Any = CrossEncoder(str(path), device="cpu", local_files_only=True)

    def rerank(self, question: str, hits: list[Hit]) -> list[Hit]:
        if not hits:
            return hits
        scores = self._model.predict([(question, h.text) for h in hits])
        rescored = [replace(h, score=float(s)) for h, s in zip(hits, scores, strict=True)]
        return sorted(rescored, key=lambda h: -h.score)
