"""The passage walk as it was before its reset came as non-zero entries and its push read
rows from the CSR arrays (`memory.passage_graph`, `memory.strategies.ppr` of stop 24),
kept as the reference that `tests/memory/test_passage_walk.py` checks the walk against
bit for bit: a reset vector over the whole graph, the push of stop 25 (rows read by
scipy's indexing and spread by numpy's `add.at`, before `memory.csr.add_rows`; the
estimate a vector over every node, added to at every round), the unreached segments
found by a scan of every segment (the walk itself, with those parts swapped back in)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import scipy.sparse as sp

from memory import passage_graph
from memory.passage_graph import PassageGraph


def reset_vector(
    graph: PassageGraph, passages: dict[str, float], links: dict[str, float], link_share: float
) -> np.ndarray:
    """`_walk`'s reset vector over [segments | nodes]."""
    reset = np.zeros(graph.n_segments + len(graph.node_ids))
    for segment, weight in passages.items():
        reset[graph.segment_position[segment]] += weight
    if links:
        share = link_share if reset.sum() > 0 else 1.0
        total = sum(links.values())
        reset *= 1.0 - share
        for entity, weight in links.items():
            reset[graph.n_segments + graph.node_position[entity]] += share * weight / total
    return reset


def scipy_rows(matrix: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """`memory.csr.row_entries` as the push read them before: scipy's row indexing."""
    taken = matrix[rows]
    return taken.indices, taken.data, np.diff(taken.indptr)


def numpy_add_rows(
    matrix: sp.csr_matrix, rows: np.ndarray, scale: np.ndarray, into: np.ndarray
) -> np.ndarray:
    """`memory.csr.add_rows` as the push spread its rows before: rows read by scipy's
    indexing, the scaled entries added by `np.add.at`."""
    columns, values, counts = scipy_rows(matrix, rows)
    np.add.at(into, columns, values * np.repeat(scale, counts))
    return columns


def push(
    graph: PassageGraph, seeds: np.ndarray, weights: np.ndarray, damping: float, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """`PassageGraph.push` as it was at stop 25: rows read by scipy's indexing and added
    by numpy, the estimate a vector over every node, added to at every round."""
    degree, transition = graph.degree, graph.transition
    seeds = np.asarray(seeds, np.int64)
    reset = np.asarray(weights, np.float64) / np.sum(weights)
    rho = np.zeros(len(degree))
    estimate = np.zeros(len(degree))
    scratch = np.empty(len(degree), np.int64)
    linked = degree[seeds] > 0
    np.add.at(estimate, seeds[~linked], (1.0 - damping) * reset[~linked])
    np.add.at(rho, seeds[linked], reset[linked] / degree[seeds[linked]])
    pending = passage_graph._distinct(seeds[linked], scratch)
    pending = pending[rho[pending] > threshold]
    pushed = [seeds[~linked]]
    while len(pending):
        levels = rho[pending]
        now = levels >= levels.max() * passage_graph.ROUND_SPREAD
        active, waiting, levels = pending[now], pending[~now], levels[now]
        pushed.append(active)
        rho[active] = 0.0
        estimate[active] += (1.0 - damping) * levels * degree[active]
        targets = numpy_add_rows(transition, active, damping * levels, rho)
        above = targets[rho[targets] > threshold]
        pending = passage_graph._distinct(np.concatenate([waiting, above]), scratch)
    nodes = passage_graph._distinct(np.concatenate(pushed), scratch)
    return nodes, estimate[nodes] + (1.0 - damping) * rho[nodes] * degree[nodes]


def top_segments(
    graph: PassageGraph, reset: np.ndarray, damping: float, count: int, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """`PassageGraph.top_segments` of the whole reset vector (its seeds found by a scan of
    it, as before), with its rows read by scipy and added by numpy and the unreached
    segments found by a scan of every segment."""

    def scan(present: np.ndarray, wanted: int) -> np.ndarray:
        unreached = np.ones(graph.n_segments, bool)
        unreached[present] = False
        return np.flatnonzero(unreached)[:wanted]

    seeds = np.flatnonzero(reset)
    with (
        mock.patch.object(PassageGraph, "push", push),
        mock.patch.object(passage_graph, "_first_absent", scan),
    ):
        return graph.top_segments(seeds, reset[seeds], damping, count, threshold)
