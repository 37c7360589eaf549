"""The optional cross-encoder stage. No reranker weights can be installed here, so the test loads
the bundled MiniLM checkpoint as a cross-encoder: its classification head is freshly initialised,
which exercises loading, scoring and re-ordering, not ranking quality."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from bot.answer.parts import AnswererParts
from bot.core.errors import RetrievalError
from retrieval.embedders.sentence_transformer import bundled_minilm_path
from retrieval.search.hybrid import search_chunks
from retrieval.search.rerank import Reranker


@pytest.fixture(scope="module")
def reranker() -> Reranker:
    return Reranker(bundled_minilm_path())


def test_missing_reranker_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RetrievalError, match="reranker model not found"):
        Reranker(tmp_path / "nowhere")


async def test_hybrid_rerank_orders_hits_by_the_cross_encoder(
    session: AsyncSession, parts: AnswererParts, reranker: Reranker, demo_kb: object
) -> None:
    question = "học phí chương trình chuẩn"
    [vector] = parts.embedder.embed_queries([question])
    terms = parts.processor.query_terms(question)
    settings = parts.settings.search.model_copy(update={"max_chunks_per_doc": 50})
    hits = await search_chunks(
        session,
        vector,
        terms,
        settings,
        limit=50,
        mode="hybrid+rerank",
        query_text=question,
        reranker=reranker,
    )
    fused = await search_chunks(session, vector, terms, settings, limit=50, mode="hybrid")
    assert len(hits) == len(fused)  # the same candidates, re-ordered (duplicates aside)
    expected = reranker._model.predict([(question, h.text) for h in hits])
    assert [h.score for h in hits] == pytest.approx(sorted(expected, reverse=True), abs=1e-5)
    assert np.all(np.diff([h.score for h in hits]) <= 1e-9)
