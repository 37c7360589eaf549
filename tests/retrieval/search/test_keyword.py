"""tuvan's sparse BM25 must score exactly as rank-bm25's BM25Okapi, the reference."""

from __future__ import annotations

import pytest
from rank_bm25 import BM25Okapi

from bot.answer.parts import AnswererParts
from bot.knowledge.demo import demo_kb_dir
from retrieval.loading import load_directory
from retrieval.search.keyword import Bm25Index


@pytest.fixture(scope="module")
def corpus(parts: AnswererParts) -> list[list[str]]:
    docs = []
    for _, doc in load_directory(demo_kb_dir() / "docs"):
        assert not isinstance(doc, Exception)
        for section in doc.sections:
            docs.append(parts.processor.doc_terms(section.text) or ["_"])
    return docs


@pytest.mark.parametrize(
    "question",
    ["học phí chương trình chuẩn", "ktx dang ky nhu the nao", "tuition fee", "xyz qwerty"],
)
def test_scores_equal_rank_bm25(
    corpus: list[list[str]], parts: AnswererParts, question: str
) -> None:
    terms = parts.processor.query_terms(question)
    reference = BM25Okapi(corpus).get_scores(list(dict.fromkeys(terms)))
    ours = Bm25Index(range(len(corpus)), corpus).scores(terms)
    assert ours == pytest.approx(reference, rel=1e-4, abs=1e-5)


def test_rank_returns_ids_best_first_and_only_matches() -> None:
    index = Bm25Index([10, 20, 30], [["hoc", "phi"], ["ky", "tuc", "xa"], ["hoc", "bong"]])
    ranked = index.rank(["hoc", "phi"], 5)
    assert [cid for cid, _ in ranked] == [10, 30]
    assert ranked[0][1] > ranked[1][1] > 0


def test_empty_index_and_unknown_terms_rank_nothing() -> None:
    assert Bm25Index([], []).rank(["hoc"], 5) == []
    assert Bm25Index([1], [["hoc"]]).rank(["zzz"], 5) == []
