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

from memory.personalai.hypergraph import Hypergraph, smallest_first
from memory.personalai.traversal import Step, Traversal

ALGORITHM = "astar"


@dataclass(frozen=True)
class AStarParams:
    """App. F defaults."""

    max_depth: int = 10
    max_passed_nodes: int = 150
    h_metric_name: str = "ip"


class Expansions:
    """What expanding a node yields, kept for one query's searches: the node's neighbours
    and their heuristic towards each target, and the per-node state of the search under
    way. The searches between every pair of linked nodes expand the same nodes again and
    again (the linked nodes and the hubs near them), and neighbourhoods overlap, so each
    node's vector is multiplied with the targets' once a query, when first met, by an
    `einsum` (not BLAS: the same bits in whatever batch). The per-node arrays start as
    zeros (allocated untouched) and hold a value only where `stamp` is the number of the
    search under way, so a search starts without clearing a whole-graph array."""

    def __init__(self, hypergraph: Hypergraph, targets: Sequence[int]) -> None:
        self._hypergraph = hypergraph
        self._column = {int(t): i for i, t in enumerate(dict.fromkeys(targets))}
        self._goals = hypergraph.node_vectors[list(self._column)]
        self._neighbours: dict[int, np.ndarray] = {}
        n_nodes = hypergraph.n_nodes
        self._heuristic = np.zeros((n_nodes, len(self._column)), np.float32)
        self._known = np.zeros(n_nodes, bool)
        self.cost = np.zeros(n_nodes, np.int64)
        """Per node, its cost in the search under way (where `stamp` says so)."""
        self.stamp = np.zeros(n_nodes, np.int64)
        self.closed = np.zeros(n_nodes, np.int64)
        """Per node, the number of the last search that expanded it."""
        self.searches = 0

    def of(self, node: int, target: int) -> tuple[np.ndarray, np.ndarray]:
        """(the node's neighbours, most recently met first; their heuristic to `target`)."""
        neighbours = self._neighbours.get(node)
        if neighbours is None:
            neighbours = self._neighbours[node] = self._hypergraph.neighbours(node)
            new = neighbours[~self._known[neighbours]]
            if len(new):
                products = np.einsum("ij,kj->ik", self._hypergraph.node_vectors[new], self._goals)
                self._heuristic[new] = np.clip((1.0 - products) / 2.0, 0.0, 1.0)
                self._known[new] = True
        return neighbours, self._heuristic[neighbours, self._column[target]]


def shortest_path(
    hypergraph: Hypergraph,
    start: int,
    target: int,
    params: AStarParams = AStarParams(),
    expansions: Expansions | None = None,
) -> tuple[list[int] | None, int, set[int]]:
    """(nodes of a cheapest start..target path or None, expansions, expanded nodes).

    The frontier is a heap of expansions rather than of nodes: an expansion's pushes are
    sorted once as arrays (by f, then h, then push order, the heap's own order) and only
    each one's next entry sits in the heap, so the pops come in the order a heap of every
    pushed node gives, without a Python push per neighbour. An expansion keeps only its
    best `max_passed_nodes - expanded + 1` pushes: each of them is a distinct node that
    must be popped (expanded, or found expanded) before any later one of the same
    expansion, and the budget ends the search before that many more pops, so the rest
    would never be popped (an exact cut, `tests/memory/test_frontier_differential.py`)."""
    expansions = expansions or Expansions(hypergraph, [target])
    expansions.searches += 1
    search = expansions.searches
    unreached = np.iinfo(np.int64).max

    def costs(nodes: np.ndarray) -> np.ndarray:
        return np.where(expansions.stamp[nodes] == search, expansions.cost[nodes], unreached)

    expansions.cost[start], expansions.stamp[start] = 0, search
    parent: dict[int, int] = {}
    pushes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [
        (np.zeros(1), np.zeros(1), np.array([start]))
    ]
    frontier = [(0.0, 0.0, 0, 0)]
    closed: set[int] = set()
    while frontier:
        _, _, batch, at = heapq.heappop(frontier)
        f, h, nodes = pushes[batch]
        if at + 1 < len(nodes):
            heapq.heappush(frontier, (float(f[at + 1]), float(h[at + 1]), batch, at + 1))
        node = int(nodes[at])
        if node in closed:
            continue
        if node == target:
            return _unwind(parent, target), len(closed), closed
        if len(closed) >= params.max_passed_nodes:
            break
        closed.add(node)
        expansions.closed[node] = search
        node_cost = int(expansions.cost[node])
        if node_cost >= params.max_depth:
            continue
        step_cost = node_cost + 1
        neighbours, heuristic = expansions.of(node, target)
        better = (costs(neighbours) > step_cost) & (expansions.closed[neighbours] != search)
        neighbours, heuristic = neighbours[better], heuristic[better].astype(np.float64)
        heuristic[neighbours == target] = 0.0
        expansions.cost[neighbours], expansions.stamp[neighbours] = step_cost, search
        kept = smallest_first(heuristic, params.max_passed_nodes - len(closed) + 1)
        if not len(kept):
            continue
        neighbours, heuristic = neighbours[kept], heuristic[kept]
        parent.update(zip(neighbours.tolist(), itertools.repeat(node)))
        pushes.append((step_cost + heuristic, heuristic, neighbours))
        heapq.heappush(
            frontier, (float(step_cost + heuristic[0]), float(heuristic[0]), len(pushes) - 1, 0)
        )
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
    linked = list(dict.fromkeys(linked))
    expansions = Expansions(hypergraph, linked)
    for start, target in itertools.combinations(linked, 2):
        path, expanded, closed = shortest_path(hypergraph, start, target, params, expansions)
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
