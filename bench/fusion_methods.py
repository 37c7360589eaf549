"""The fusions the fusion bench compares: one retriever alone, reciprocal rank fusion, and score
fusion with its weight fixed or chosen per query; each gives every chunk's fused score."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from fusion_corpus import Query, _top

Fusion = Callable[[Query, bool], np.ndarray[Any, Any]]  # fused score of every chunk, -inf = out


def _candidates(q: Query, n: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    dense = _top(q.dense, n)
    keyword = _top(q.bm25, n)
    keyword = keyword[q.bm25[keyword] > 0]
    return dense, keyword


def single(which: str) -> Fusion:
    def fuse(q: Query, restored: bool) -> np.ndarray[Any, Any]:
        scores = q.dense if which == "dense" else np.where(q.bm25 > 0, q.bm25, -np.inf)
        return np.asarray(scores, dtype=np.float64)

    return fuse


def rrf(k: int, keyword_weight: float, n: int = 40) -> Fusion:
    def fuse(q: Query, restored: bool) -> np.ndarray[Any, Any]:
        dense, keyword = _candidates(q, n)
        out = np.full(len(q.dense), -np.inf)
        for ranking, weight in ((keyword, keyword_weight), (dense, 1 - keyword_weight)):
            for rank, i in enumerate(ranking, start=1):
                out[i] = (0 if out[i] == -np.inf else out[i]) + 2 * weight / (k + rank)
        return out

    return fuse


def _scaled(
    values: np.ndarray[Any, Any], top: np.ndarray[Any, Any], how: str
) -> np.ndarray[Any, Any]:
    own = values[top]
    if how == "z":
        mean, sd = float(own.mean()), float(own.std())
        return (values - mean) / sd if sd > 0 else np.zeros_like(values)
    low, high = float(own.min()), float(own.max())
    if high <= low:
        return (values >= high).astype(np.float64)
    return np.maximum(0.0, (values - low) / (high - low))


def score(
    alpha: float | Callable[[Query, bool], float],
    n: int = 40,
    how: str = "minmax",
    dense_of: Callable[[Query, bool], np.ndarray[Any, Any]] | None = None,
) -> Fusion:
    """α·BM25 + (1-α)·dense over the union of both top-n lists, each normalised over its own."""

    def fuse(q: Query, restored: bool) -> np.ndarray[Any, Any]:
        dense_scores = dense_of(q, restored) if dense_of else q.dense
        dense = _top(dense_scores, n)
        keyword = _top(q.bm25, n)
        keyword = keyword[q.bm25[keyword] > 0]
        a = alpha(q, restored) if callable(alpha) else alpha
        d = _scaled(dense_scores, dense, how)
        k = _scaled(q.bm25, keyword, how) if len(keyword) else np.zeros(len(q.bm25))
        if how == "z" and len(keyword):
            k = np.where(q.bm25 > 0, k, float(k[keyword].min()))
        out = np.full(len(q.dense), -np.inf)
        union = np.union1d(dense, keyword)
        out[union] = a * k[union] + (1 - a) * d[union]
        return out

    return fuse


def when_restored(base: float, unaccented: float) -> Callable[[Query, bool], float]:
    return lambda q, restored: unaccented if restored else base


def by_peak(low: float, high: float) -> Callable[[Query, bool], float]:
    """α from low to high as BM25's best pulls away from its fifth (a clear keyword winner)."""

    def alpha(q: Query, restored: bool) -> float:
        top = np.sort(q.bm25)[::-1][:5]
        if top[0] <= 0:
            return low
        gap = float((top[0] - top[-1]) / top[0])
        return low + (high - low) * min(1.0, gap / 0.5)

    return alpha


def by_length(short: float, long: float, words: int = 8) -> Callable[[Query, bool], float]:
    return lambda q, restored: short if q.words <= words else long


def max_dense(q: Query, restored: bool) -> np.ndarray[Any, Any]:
    return np.maximum(q.dense, q.raw)


def mean_dense(q: Query, restored: bool) -> np.ndarray[Any, Any]:
    return (q.dense + q.raw) / 2


FUSIONS: dict[str, Fusion] = {
    "dense": single("dense"),
    "bm25": single("bm25"),
    "rrf k60 1:1 (before)": rrf(60, 0.5),
    "rrf k60 0.7:0.3": rrf(60, 0.7),
    "rrf k60 0.8:0.2": rrf(60, 0.8),
    "rrf k20 0.7:0.3": rrf(20, 0.7),
    "score α0.5": score(0.5),
    "score α0.6": score(0.6),
    "score α0.7 (default)": score(0.7),
    "score α0.8": score(0.8),
    "score α0.7 N20": score(0.7, n=20),
    "score α0.7 N100": score(0.7, n=100),
    "score z α0.7": score(0.7, how="z"),
    "score α0.6 / 0.8 unaccented": score(when_restored(0.6, 0.8)),
    "score α 0.5-0.9 by BM25 peak": score(by_peak(0.5, 0.9)),
    "score α 0.6 short / 0.8 long": score(by_length(0.6, 0.8)),
    "score α0.7 dense max(restored, raw)": score(0.7, dense_of=max_dense),
    "score α0.7 dense mean(restored, raw)": score(0.7, dense_of=mean_dense),
}
