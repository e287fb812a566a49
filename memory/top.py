"""The positions of the largest values of an array, in the order a stable sort of all of
them gives, without sorting them all: a strategy keeps the first k of a score over every
segment or fact (a million at 1M facts) and orders only those."""

from __future__ import annotations

import numpy as np


def top_positions(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` largest `values`, largest first, ties by position: exactly
    `np.argsort(-values, kind="stable")[:count]`, by a partition and a sort of the few
    values at or above the count-th, not of them all."""
    if count <= 0 or not len(values):
        return np.zeros(0, np.int64)
    if count >= len(values):
        return np.argsort(-values, kind="stable")
    kth = np.partition(values, len(values) - count)[len(values) - count]
    head = np.flatnonzero(values >= kth)
    return head[np.argsort(-values[head], kind="stable")][:count]
