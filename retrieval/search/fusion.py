"""Fusing rankings: normalised score fusion (what hybrid search answers with), RRF, interleaving.

Hybrid search fuses BM25 and the dense cosine by their *scores*, each min-max normalised over
its own top ``candidates``, weighted ``keyword_weight`` : 1 - ``keyword_weight`` (ViRE's
"α-fusion"). Measured on every development set, written and without diacritics
(docs/benchmarks.md, "Fusion: what was tried"; bench/fusion.py): plain RRF (k 60, equal
weights) fell below BM25 alone wherever the dense ranker is the weaker one (ViRHE4QA: 0.765
against BM25's 0.829 MRR@10); weighted RRF (keyword 0.7-0.8) still stayed below it (0.801-0.814);
score fusion at 0.7 beats the best single ranker on every set and form (+0.010 at worst).
Scores keep what ranks throw away: a passage BM25 finds far ahead of the rest stays ahead.

RRF stays for rankings without comparable scores (several queries of an LLM plan, summaries),
and interleaving for the parts of a multi-part question (every part's best passage first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def rrf(
    rankings: Sequence[Sequence[int]], k: int, weights: Sequence[float] | None = None
) -> dict[int, float]:
    """Reciprocal rank fusion: Σ w/(k + rank), ranks from 1."""
    fused: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        weight = weights[i] if weights else 1.0
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def _normaliser(top: Iterable[float]) -> tuple[float, float]:
    """(low, span) of a ranker's own top list: its best maps to 1, its last to 0."""
    values = list(top)
    if not values:
        return 0.0, 0.0
    low, high = min(values), max(values)
    return low, high - low


def score_fusion(
    keyword_top: Mapping[int, float],
    dense_top: Mapping[int, float],
    keyword_score: Mapping[int, float],
    dense_score: Mapping[int, float],
    keyword_weight: float,
) -> dict[int, float]:
    """Min-max normalised score fusion over the union of both top lists.

    ``*_top`` are each ranker's own top candidates with their scores (they set the scale);
    ``*_score`` the scores of every candidate of the union (a candidate the keyword side has no
    score for scores 0 there). A normalised score below a ranker's own last candidate is 0, so
    a candidate only the other ranker found is not pushed below nothing. A ranker whose top
    list is flat (one candidate, or all equal) counts 1 for its best and 0 for the rest.
    """
    k_low, k_span = _normaliser(keyword_top.values())
    d_low, d_span = _normaliser(dense_top.values())
    k_high = k_low + k_span
    d_high = d_low + d_span

    def scaled(value: float, low: float, span: float, high: float) -> float:
        if span <= 0:
            return 1.0 if value >= high and value > 0 else 0.0
        return max(0.0, (value - low) / span)

    fused: dict[int, float] = {}
    for item in {**keyword_top, **dense_top}:
        k = scaled(keyword_score.get(item, 0.0), k_low, k_span, k_high) if keyword_top else 0.0
        d = scaled(dense_score.get(item, d_low), d_low, d_span, d_high) if dense_top else 0.0
        fused[item] = keyword_weight * k + (1.0 - keyword_weight) * d
    return fused


def interleave(rankings: Sequence[Sequence[int]]) -> list[int]:
    """Round robin over the rankings (first of each, then second of each...), duplicates
    skipped: every ranking's best items come before any ranking's later ones."""
    seen: set[int] = set()
    out: list[int] = []
    for depth in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if depth < len(ranking) and ranking[depth] not in seen:
                seen.add(ranking[depth])
                out.append(ranking[depth])
    return out
