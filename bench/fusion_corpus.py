"""What the fusion bench ranks over: each set's chunks and, per question (as written and without
diacritics, whole and split), every chunk's dense, raw and BM25 scores, gathered once; and
copies of it with other BM25 parameters or with feedback."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from common import progress
from question_sets import QuestionSet, knowledge_for
from sqlalchemy import text

from bot.evaluation.data import Question, read_questions
from bot.evaluation.workspace import load_corpus, load_passages, prepare_all, throwaway_database
from retrieval.embedders.base import embed_off_loop
from retrieval.query import question_vector
from retrieval.search.keyword import Bm25Index, bm25_index
from retrieval.text.folding import fold


@dataclass
class Query:
    dense: np.ndarray[Any, Any]  # cosine of every chunk (restored question)
    raw: np.ndarray[Any, Any]  # cosine of every chunk (the question as typed, expanded)
    bm25: np.ndarray[Any, Any]  # BM25 of every chunk
    words: int
    terms: list[str] = field(default_factory=list)


@dataclass
class Asked:
    question: Question
    restored: bool
    queries: list[Query]  # the whole question first, then its parts


@dataclass
class Corpus:
    ids: list[int]
    units: dict[str, list[Any]]  # level -> unit of each chunk (in ``ids`` order)
    texts: list[str]
    doc_terms: list[list[str]] = field(default_factory=list)  # BM25's terms of each chunk
    vectors: np.ndarray[Any, Any] | None = None  # the chunks' embeddings, normalised
    sets: dict[str, list[Asked]] = field(default_factory=dict)  # form -> questions


async def gather(parts: Any, qs: QuestionSet, quick: bool) -> Corpus:
    asked, knowledge = knowledge_for(qs, read_questions(qs.questions), quick)
    questions = [q for q in asked if not q.out_of_scope]
    async with throwaway_database() as ws:
        if knowledge.passages is not None:
            await load_passages(ws, parts, knowledge.passages)
        elif knowledge.corpus is not None:
            await load_corpus(ws, parts, knowledge.corpus)
        async with ws.sessionmaker() as session:
            rows = (
                await session.execute(
                    text(
                        "SELECT c.id, c.external_id, c.text, c.embedding, c.keyword_text, "
                        "d.source FROM chunks c "
                        "JOIN documents d ON d.id = c.document_id ORDER BY c.id"
                    )
                )
            ).all()
            index = await bm25_index(session)
        ids = [r.id for r in rows]
        if list(index.ids) != ids:
            raise RuntimeError("the BM25 index and the chunks disagree")
        matrix = np.vstack([np.asarray(json.loads(r.embedding), dtype=np.float32) for r in rows])
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        corpus = Corpus(
            ids,
            {
                "chunk": [r.external_id for r in rows],
                "document": [Path(r.source).name for r in rows],
            },
            [" ".join(r.text.split()).lower() for r in rows],
            [r.keyword_text.split() or ["_"] for r in rows],
            matrix,
        )
        for form in ("written", "unaccented"):
            asked = [q.question if form == "written" else fold(q.question) for q in questions]
            prepared, vectors = await prepare_all(ws, parts, asked)
            raw_texts = [parts.processor.expand_query(t) for t in asked]
            raw = await embed_off_loop(parts.embedder.embed_queries, raw_texts)
            out: list[Asked] = []

            def query(vector: Any, raw_vector: Any, terms: Sequence[str], text: str) -> Query:
                return Query(
                    matrix @ vector,
                    matrix @ raw_vector,
                    index.scores(list(terms)),
                    len(text.split()),
                    list(terms),
                )

            for q, p, vs, r in zip(questions, prepared, vectors, raw, strict=True):
                queries = [query(question_vector(p, vs), r, p.terms, p.question)]
                queries += [
                    query(v, v, part.terms, part.text) for part, v in zip(p.parts, vs, strict=False)
                ]
                out.append(Asked(q, p.restored is not None, queries))
            corpus.sets[form] = out
            progress(f"{qs.name} {form}: {len(out)} questions read and scored")
    return corpus


def with_bm25(corpus: Corpus, **params: float) -> Corpus:
    """The same corpus and questions, BM25 scored with other parameters (k1, b, epsilon)."""
    index = Bm25Index(list(range(len(corpus.ids))), corpus.doc_terms, **params)
    sets = {
        form: [
            Asked(
                a.question,
                a.restored,
                [replace(q, bm25=index.scores(q.terms)) for q in a.queries],
            )
            for a in asked
        ]
        for form, asked in corpus.sets.items()
    }
    return replace(corpus, sets=sets)


def with_feedback(corpus: Corpus, beta: float, k: int) -> Corpus:
    """The dense query moved towards BM25's top ``k`` chunks (Rocchio pseudo-relevance feedback):
    q' = q + β·centroid, cosines rescaled by |q'|."""
    matrix = corpus.vectors
    if matrix is None:
        raise ValueError("the cached scores predate the stored vectors: run without --cache")

    def moved(q: Query) -> Query:
        top = _top(q.bm25, k)
        top = top[q.bm25[top] > 0]
        if not len(top):
            return q
        centroid = matrix[top].mean(axis=0)
        norm = 1 + 2 * beta * float(q.dense[top].mean()) + beta**2 * float(centroid @ centroid)
        return replace(q, dense=(q.dense + beta * (matrix @ centroid)) / np.sqrt(norm))

    sets = {
        form: [Asked(a.question, a.restored, [moved(q) for q in a.queries]) for a in asked]
        for form, asked in corpus.sets.items()
    }
    return replace(corpus, sets=sets)


def _top(scores: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    n = min(n, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    return top[np.argsort(-scores[top], kind="stable")]
