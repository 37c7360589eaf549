"""The ranking and key-fact metrics of the evaluations, worked by hand."""

from __future__ import annotations

import math

import pytest

from bot.evaluation.metrics import facts_found, first_ranks, norm, ranking_metrics


def test_ranking_metrics_by_hand() -> None:
    ranked = first_ranks(["a", "x", "a", "b", "y", "c"])  # -> a x b y c
    assert ranked == ["a", "x", "b", "y", "c"]
    m = ranking_metrics(ranked, {"b", "c"}, ks=(1, 3, 5))
    assert (m["hit@1"], m["hit@3"], m["mrr@1"], m["mrr@3"]) == (0.0, 1.0, 0.0, 1 / 3)
    assert m["recall@3"] == 0.5
    assert m["recall@5"] == 1.0
    assert (m["all@3"], m["all@5"]) == (0.0, 1.0)
    ideal = 1 + 1 / math.log2(3)
    assert m["ndcg@3"] == pytest.approx((1 / math.log2(4)) / ideal)
    assert m["ndcg@5"] == pytest.approx((1 / math.log2(4) + 1 / math.log2(6)) / ideal)


def test_key_facts_compare_without_accents_case_or_spacing() -> None:
    assert norm("  Ký   TÚC xá  Đại ") == "ky tuc xa dai"
    answer = "Phí ký túc xá là 500.000 ĐỒNG mỗi tháng"
    assert facts_found(answer, ["500.000 đồng", "mỗi  tháng", "600.000"]) == 2
