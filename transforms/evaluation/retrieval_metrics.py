"""Retrieval metrics for the LoCoMo and MuSiQue evaluations, as pure functions on rankings.

Definitions (a "ranking" is a list of unit ids, best first; units are passages, turns or
sessions; each gold unit counts once however often it is retrieved):
- recall@k (HippoRAG, arXiv 2405.14831 §4; MemORAI §5 Recall@k): the fraction of the
  question's gold units among the first k distinct units of the ranking, averaged over
  questions. MemORAI does not say "fraction" or "any hit"; we take the fraction, as
  HippoRAG does, so both benchmarks share one definition.
- MRR: the mean over questions of 1 / rank of the first gold unit among the distinct units
  of the ranking (0 when none is retrieved within the evaluated depth).
- Session-level ranking (MemORAI leaves it open): the sessions of the ranked turns, in the
  order of their first turn, duplicates dropped (`distinct`).
- latency p50/p95: linear interpolation between order statistics (numpy's default).
- Regression: a metric regresses when it drops by more than `margin` (absolute) against the
  previous value of the same metric; metrics missing on either side are not compared.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T", bound=Hashable)
_FLOAT_SLACK = 1e-9
"""So that a drop of exactly `margin` (0.50 -> 0.48 at 0.02) is not a regression."""


def distinct(ranking: Iterable[T]) -> list[T]:
    """The ranking with later duplicates dropped (first occurrence keeps its place)."""
    seen: set[T] = set()
    kept: list[T] = []
    for unit in ranking:
        if unit not in seen:
            seen.add(unit)
            kept.append(unit)
    return kept


def recall_at_k(ranking: Sequence[T], gold: Iterable[T], k: int) -> float:
    """Fraction of `gold` among the first `k` distinct units of `ranking`."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall is undefined for a question without gold units")
    return len(wanted & set(distinct(ranking)[:k])) / len(wanted)


def reciprocal_rank(ranking: Sequence[T], gold: Iterable[T]) -> float:
    """1 / rank of the first gold unit among the distinct units of `ranking`, else 0."""
    wanted = set(gold)
    for rank, unit in enumerate(distinct(ranking), 1):
        if unit in wanted:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of `values`; 0.0 for no values."""
    return float(np.percentile(np.asarray(values, float), q)) if len(values) else 0.0


def mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else 0.0


def grouped_means(
    scores: Sequence[Mapping[str, float]], groups: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Mean of every metric of `scores` overall (key "overall") and per group label.

    `scores[i]` are the metric values of question i and `groups[i]` its group (category)."""
    if len(scores) != len(groups):
        raise ValueError("one group label per question is needed")
    buckets: dict[str, list[Mapping[str, float]]] = {"overall": list(scores)}
    for score, group in zip(scores, groups, strict=True):
        buckets.setdefault(group, []).append(score)
    return {
        name: {metric: mean([s[metric] for s in members]) for metric in members[0]}
        for name, members in buckets.items()
        if members
    }


def regressions(
    previous: Mapping[str, float], current: Mapping[str, float], margin: float = 0.02
) -> dict[str, float]:
    """Metrics of `current` that dropped by more than `margin` against `previous`, with
    the size of the drop; an empty dict means no regression."""
    if margin < 0:
        raise ValueError(f"margin must be non-negative, got {margin}")
    return {
        metric: round(previous[metric] - value, 6)
        for metric, value in current.items()
        if metric in previous and previous[metric] - value > margin + _FLOAT_SLACK
    }
