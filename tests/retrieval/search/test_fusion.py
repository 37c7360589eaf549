"""Fusing rankings (retrieval.fusion): score fusion, RRF, interleaving."""

from __future__ import annotations

import pytest

from retrieval.search.fusion import interleave, rrf, score_fusion


def test_score_fusion_weighs_min_max_normalised_scores() -> None:
    keyword_top = {1: 12.0, 2: 6.0, 3: 2.0}  # BM25: 1 -> 1.0, 2 -> 0.4, 3 -> 0.0
    dense_top = {2: 0.90, 3: 0.85, 4: 0.80}  # cosine: 2 -> 1.0, 3 -> 0.5, 4 -> 0.0
    keyword = {**keyword_top, 4: 0.0}
    dense = {**dense_top, 1: 0.82}
    fused = score_fusion(keyword_top, dense_top, keyword, dense, keyword_weight=0.7)
    assert fused[1] == pytest.approx(0.7 * 1.0 + 0.3 * 0.2)
    assert fused[2] == pytest.approx(0.7 * 0.4 + 0.3 * 1.0)
    assert fused[3] == pytest.approx(0.7 * 0.0 + 0.3 * 0.5)
    assert fused[4] == pytest.approx(0.0)
    assert sorted(fused, key=lambda c: -fused[c]) == [1, 2, 3, 4]


def test_a_candidate_below_a_rankers_own_last_counts_zero_there() -> None:
    fused = score_fusion(
        {1: 5.0, 2: 1.0}, {3: 0.9, 4: 0.8}, {1: 5, 2: 1}, {1: 0.5, 3: 0.9, 4: 0.8}, 0.5
    )
    assert fused[1] == pytest.approx(0.5)  # its cosine 0.5 is below the dense list's 0.8


def test_the_weight_moves_the_order_between_the_rankers() -> None:
    args = ({1: 10.0, 2: 0.0}, {2: 0.9, 1: 0.1}, {1: 10.0, 2: 0.0}, {1: 0.1, 2: 0.9})
    keyword_first = score_fusion(*args, keyword_weight=0.9)
    dense_first = score_fusion(*args, keyword_weight=0.1)
    assert keyword_first[1] > keyword_first[2]
    assert dense_first[2] > dense_first[1]


def test_flat_or_empty_rankings_fuse_without_dividing_by_zero() -> None:
    assert score_fusion({}, {}, {}, {}, 0.7) == {}
    only_dense = score_fusion({}, {7: 0.8}, {}, {7: 0.8}, 0.7)
    assert only_dense == {7: pytest.approx(0.3)}
    flat = score_fusion({1: 3.0, 2: 3.0}, {}, {1: 3.0, 2: 3.0}, {}, 0.7)
    assert flat == {1: pytest.approx(0.7), 2: pytest.approx(0.7)}


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = rrf([[10, 20, 30], [30, 10]], k=60)
    assert fused[10] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[30] == pytest.approx(1 / 63 + 1 / 61)
    weighted = rrf([[1, 2], [2, 3]], k=60, weights=[0.3, 1.0])
    assert weighted[2] == pytest.approx(0.3 / 62 + 1 / 61)
    assert rrf([], k=60) == {}


def test_interleave_takes_every_rankings_best_first_and_skips_repeats() -> None:
    assert interleave([[1, 2, 3], [4, 1, 5], [6]]) == [1, 4, 6, 2, 3, 5]
    assert interleave([]) == []
    assert interleave([[], [2]]) == [2]
