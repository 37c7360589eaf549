"""Optional cross-encoder reranking (sentence-transformers) from a local model path.

Off by default: no reranker weights can be installed from a package here, so an operator points
``TUVAN_SEARCH__RERANKER_PATH`` at a downloaded model (e.g. a multilingual MS MARCO cross-encoder).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.core.errors import RetrievalError

if TYPE_CHECKING:
    from retrieval.search import Hit


class Reranker:
    def __init__(self, path: Path) -> None:
        if not path.exists():
            raise RetrievalError(f"reranker model not found at {path}")
        from sentence_transformers import CrossEncoder

        self._model: Any = CrossEncoder(str(path), device="cpu", local_files_only=True)

    def rerank(self, question: str, hits: list[Hit]) -> list[Hit]:
        if not hits:
            return hits
        scores = self._model.predict([(question, h.text) for h in hits])
        rescored = [replace(h, score=float(s)) for h, s in zip(hits, scores, strict=True)]
        return sorted(rescored, key=lambda h: -h.score)
