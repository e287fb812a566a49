"""PersonalAI's A* retriever: shortest paths between every pair of linked query nodes, and
every hyperedge joining two consecutive nodes of those paths.

Paper (§3, App. F): the graph is treated as unweighted and undirected with a constant
distance between adjacent nodes; the heuristic is the inner product of the current node's
and the target's embeddings (`h_metric_name = ip`, the only one evaluated);
`max_depth = 10`, `max_passed_nodes = 150`; the triplets met along the shortest paths are
kept, duplicates removed.

Choices where the paper is silent:
- Nodes are adjacent when they share a hyperedge (fact, thesis or episode), one CSR row of
  the hypergraph's adjacency; every step costs 1.
- The inner product becomes a cost as h(v) = (1 - <e_v, e_target>) / 2 on normalised
  vectors, in [0, 1] and 0 at the target; every other node is at least one step away, so
  h never overestimates and A* returns a cheapest (fewest-step) path.
- Ties on f = g + h go to the smaller h, then to the earlier push.
- `max_depth` bounds g (nodes at that depth are not expanded), `max_passed_nodes` bounds
  the expansions; a pair whose target is not reached within them yields no path.
- All hyperedges joining two consecutive path nodes are retrieved (the paper keeps every
  triplet between them); each keeps the whole path as its chain, shown with the
  representative hyperedge of each step (a fact before a thesis before an episode).
"""

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
    unreached = np.iinfo(np.int64).max
    cost = np.full(hypergraph.n_nodes, unreached, np.int64)
    cost[start] = 0
    is_closed = np.zeros(hypergraph.n_nodes, bool)
    parent: dict[int, int] = {}
    counter = itertools.count()
    frontier = [(0.0, 0.0, next(counter), start)]
    closed: set[int] = set()
    while frontier:
        _, _, _, node = heapq.heappop(frontier)
        if is_closed[node]:
            continue
        if node == target:
            return _unwind(parent, target), len(closed), closed
        if len(closed) >= params.max_passed_nodes:
            break
        closed.add(node)
        is_closed[node] = True
        if cost[node] >= params.max_depth:
            continue
        step_cost = int(cost[node]) + 1
        neighbours = hypergraph.neighbours(node)
        better = ~is_closed[neighbours] & (cost[neighbours] > step_cost)
        neighbours = neighbours[better]
        heuristic = np.clip((1.0 - hypergraph.node_vectors[neighbours] @ goal) / 2.0, 0.0, 1.0)
        heuristic[neighbours == target] = 0.0
        cost[neighbours] = step_cost
        for other, h in zip(neighbours.tolist(), heuristic.tolist(), strict=True):
            parent[other] = node
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
