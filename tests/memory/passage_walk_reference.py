"""The passage walk as it was before its reset came as non-zero entries and its push read
rows from the CSR arrays (`memory.passage_graph`, `memory.strategies.ppr` of stop 24),
kept as the reference that `tests/memory/test_passage_walk.py` checks the walk against
bit for bit: a reset vector over the whole graph, rows read by scipy's indexing, the
unreached segments found by a scan of every segment."""

from __future__ import annotations

import numpy as np

from memory.passage_graph import ROUND_SPREAD, PassageGraph, _distinct
from memory.top import top_positions


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


def push(
    graph: PassageGraph, seeds: np.ndarray, weights: np.ndarray, damping: float, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    degree, transition = graph.degree, graph.transition
    seeds = np.asarray(seeds, np.int64)
    reset = np.asarray(weights, np.float64) / np.sum(weights)
    rho = np.zeros(len(degree))
    estimate = np.zeros(len(degree))
    scratch = np.empty(len(degree), np.int64)
    linked = degree[seeds] > 0
    np.add.at(estimate, seeds[~linked], (1.0 - damping) * reset[~linked])
    np.add.at(rho, seeds[linked], reset[linked] / degree[seeds[linked]])
    pending = _distinct(seeds[linked], scratch)
    pending = pending[rho[pending] > threshold]
    pushed = [seeds[~linked]]
    while len(pending):
        levels = rho[pending]
        now = levels >= levels.max() * ROUND_SPREAD
        active, waiting, levels = pending[now], pending[~now], levels[now]
        pushed.append(active)
        rho[active] = 0.0
        estimate[active] += (1.0 - damping) * levels * degree[active]
        rows = transition[active]
        targets = rows.indices
        np.add.at(rho, targets, rows.data * np.repeat(damping * levels, np.diff(rows.indptr)))
        above = targets[rho[targets] > threshold]
        pending = _distinct(np.concatenate([waiting, above]), scratch)
    nodes = _distinct(np.concatenate(pushed), scratch)
    return nodes, estimate[nodes] + (1.0 - damping) * rho[nodes] * degree[nodes]


def top_segments(
    graph: PassageGraph, reset: np.ndarray, damping: float, count: int, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    if threshold <= 0:
        mass = graph.walk(reset, damping)[: graph.n_segments]
        reached = np.flatnonzero(mass)
        mass = mass[reached]
    else:
        seeds = np.flatnonzero(reset)
        nodes, estimate = push(graph, seeds, reset[seeds], damping, threshold)
        lost = damping * reset[seeds][graph.degree[seeds] == 0].sum() / reset[seeds].sum()
        segments = nodes < graph.n_segments
        order = np.argsort(nodes[segments])
        reached = nodes[segments][order]
        mass = estimate[segments][order] / (1.0 - lost)
    top = top_positions(mass, count)
    chosen, masses = reached[top], mass[top]
    missing = min(count, graph.n_segments) - len(chosen)
    if missing > 0:
        unreached = np.ones(graph.n_segments, bool)
        unreached[reached] = False
        chosen = np.concatenate([chosen, np.flatnonzero(unreached)[:missing]])
        masses = np.concatenate([masses, np.zeros(len(chosen) - len(masses))])
    return chosen, masses
