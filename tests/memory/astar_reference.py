"""Test oracle: PersonalAI A* as it was before its neighbours came from the hyperedges
on the fly (it read rows of the whole-graph adjacency product) and its relaxation ran
on arrays, kept verbatim so the differential test can check that
`memory.personalai.astar` returns identical paths, chains and details. Not product
code. Its adjacency is the product the hypergraph used to cache."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.personalai.hypergraph import Hypergraph
from memory.personalai.traversal import Step, Traversal

ALGORITHM = "astar"


@dataclass(frozen=True)
class AStarParams:
    """App. F defaults."""

    max_depth: int = 10
    max_passed_nodes: int = 150
    h_metric_name: str = "ip"


def shortest_path(
    hypergraph: Hypergraph, start: int, target: int, params: AStarParams = AStarParams()
) -> tuple[list[int] | None, int, set[int]]:
    """(nodes of a cheapest start..target path or None, expansions, expanded nodes)."""
    goal = hypergraph.node_vectors[target]
    cost = {start: 0}
    parent: dict[int, int] = {}
    counter = itertools.count()
    frontier = [(0.0, 0.0, next(counter), start)]
    closed: set[int] = set()
    while frontier:
        _, _, _, node = heapq.heappop(frontier)
        if node in closed:
            continue
        if node == target:
            return _unwind(parent, target), len(closed), closed
        if len(closed) >= params.max_passed_nodes:
            break
        closed.add(node)
        if cost[node] >= params.max_depth:
            continue
        neighbours = _adjacency(hypergraph)[node].indices
        heuristic = np.clip((1.0 - hypergraph.node_vectors[neighbours] @ goal) / 2.0, 0.0, 1.0)
        step_cost = cost[node] + 1
        for other, h in zip(neighbours.tolist(), heuristic.tolist(), strict=True):
            if other in closed or cost.get(other, step_cost + 1) <= step_cost:
                continue
            cost[other], parent[other] = step_cost, node
            h = 0.0 if other == target else h
            heapq.heappush(frontier, (step_cost + h, h, next(counter), other))
    return None, len(closed), closed


def astar(
    hypergraph: Hypergraph,
    linked: Sequence[int],
    params: AStarParams = AStarParams(),
    node_name: Callable[[int], Any] = int,
) -> Traversal:
    """A* between every unordered pair of `linked` nodes; hyperedges along the paths."""
    traversal = Traversal()
    pairs = []
    for start, target in itertools.combinations(dict.fromkeys(linked), 2):
        path, expanded, closed = shortest_path(hypergraph, start, target, params)
        traversal.visited |= closed
        pairs.append(
            {
                "from": node_name(start),
                "to": node_name(target),
                "path": [node_name(n) for n in path] if path else None,
                "expanded": expanded,
            }
        )
        if not path:
            continue
        traversal.visited |= set(path)
        joins = [hypergraph.joining(u, v) for u, v in itertools.pairwise(path)]
        chain = tuple(
            Step(int(_representative(hypergraph, j)), u, v)
            for j, (u, v) in zip(joins, itertools.pairwise(path), strict=True)
        )
        for join in joins:
            for hyperedge in join.tolist():
                traversal.retrieve(ALGORITHM, hyperedge, chain)
    traversal.details[ALGORITHM] = {**asdict(params), "pairs": pairs}
    return traversal


def _unwind(parent: dict[int, int], node: int) -> list[int]:
    path = [node]
    while path[-1] in parent:
        path.append(parent[path[-1]])
    return path[::-1]


def _representative(hypergraph: Hypergraph, join: np.ndarray) -> int:
    """The hyperedge shown for a step: the first of the lowest kind (facts first)."""
    return int(join[np.argmin(hypergraph.kinds[join])])


def _adjacency(hypergraph: Hypergraph):
    """The node x node product the hypergraph cached before (rows in its SMMP order)."""
    cached = getattr(hypergraph, "_reference_adjacency", None)
    if cached is None:
        product = (hypergraph.incidence @ hypergraph.members).tocsr()
        product.setdiag(0)
        product.eliminate_zeros()
        cached = hypergraph._reference_adjacency = product
    return cached
