"""Test oracle: PersonalAI A* as it was before its neighbours came from the hyperedges
on the fly (it read rows of the whole-graph adjacency product) and its relaxation ran
on arrays, its search kept verbatim (the parameters and path unwinding
are the product's) so the differential test can check that
`memory.personalai.astar.shortest_path` returns identical paths. Not product code. Its
adjacency is the product the hypergraph used to cache."""

from __future__ import annotations

import heapq
import itertools

import numpy as np

from memory.personalai.astar import AStarParams, _unwind
from memory.personalai.hypergraph import Hypergraph


def shortest_path(
    hypergraph: Hypergraph, start: int, target: int, params: AStarParams
) -> tuple[list[int] | None, int, set[int]]:
    """(nodes of a cheapest start..target path or None, expansions, expanded nodes)."""
    goal = hypergraph.node_vectors_of([target])[0]
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
        heuristic = np.clip((1.0 - hypergraph.node_vectors_of(neighbours) @ goal) / 2.0, 0.0, 1.0)
        step_cost = cost[node] + 1
        for other, h in zip(neighbours.tolist(), heuristic.tolist(), strict=True):
            if other in closed or cost.get(other, step_cost + 1) <= step_cost:
                continue
            cost[other], parent[other] = step_cost, node
            h = 0.0 if other == target else h
            heapq.heappush(frontier, (step_cost + h, h, next(counter), other))
    return None, len(closed), closed


def _adjacency(hypergraph: Hypergraph):
    """The node x node product the hypergraph cached before (rows in its SMMP order)."""
    cached = getattr(hypergraph, "_reference_adjacency", None)
    if cached is None:
        product = (hypergraph.incidence @ hypergraph.members).tocsr()
        product.setdiag(0)
        product.eliminate_zeros()
        cached = hypergraph._reference_adjacency = product
    return cached
