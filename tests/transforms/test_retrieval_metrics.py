"""Retrieval metrics on hand-built rankings: recall@k, MRR, grouping, regression verdicts."""

import pytest

from transforms.evaluation.retrieval_metrics import (
    distinct,
    grouped_means,
    percentile,
    recall_at_k,
    reciprocal_rank,
    regressions,
)


def test_recall_counts_each_gold_unit_once_among_distinct_top_k():
    ranking = ["a", "a", "x", "b", "c"]
    assert distinct(ranking) == ["a", "x", "b", "c"]
    assert recall_at_k(ranking, {"a", "b"}, 1) == 0.5
    assert recall_at_k(ranking, {"a", "b"}, 2) == 0.5  # the duplicate "a" takes no slot
    assert recall_at_k(ranking, {"a", "b"}, 3) == 1.0
    assert recall_at_k(ranking, {"a", "b", "z"}, 10) == pytest.approx(2 / 3)
    assert recall_at_k([], {"a"}, 5) == 0.0


def test_recall_rejects_bad_inputs():
    with pytest.raises(ValueError):
        recall_at_k(["a"], {"a"}, 0)
    with pytest.raises(ValueError):
        recall_at_k(["a"], set(), 3)


def test_reciprocal_rank_of_first_gold_unit():
    assert reciprocal_rank(["x", "x", "y", "g"], {"g", "h"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["g"], {"g"}) == 1.0
    assert reciprocal_rank(["x", "y"], {"g"}) == 0.0


def test_grouped_means_overall_and_per_category():
    scores = [{"r": 1.0}, {"r": 0.0}, {"r": 0.5}]
    means = grouped_means(scores, ["a", "b", "a"])
    assert means == {"overall": {"r": 0.5}, "a": {"r": 0.75}, "b": {"r": 0.0}}
    with pytest.raises(ValueError):
        grouped_means(scores, ["a"])


def test_percentile_interpolates():
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == 25.0
    assert percentile([5.0], 95) == 5.0
    assert percentile([], 50) == 0.0


def test_regressions_flag_only_drops_beyond_the_margin():
    previous = {"recall@2": 0.50, "recall@5": 0.70, "mrr": 0.60}
    current = {"recall@2": 0.48, "recall@5": 0.60, "mrr": 0.90, "new": 0.1}
    assert regressions(previous, current, 0.02) == {"recall@5": pytest.approx(0.1)}
    assert regressions(previous, current, 0.0) == {
        "recall@2": pytest.approx(0.02),
        "recall@5": pytest.approx(0.1),
    }
    assert regressions(previous, previous) == {}
    assert regressions({}, current) == {}
    with pytest.raises(ValueError):
        regressions(previous, current, -0.1)
