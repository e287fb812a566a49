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
  h never overestimates and A* returns a cheapest (fewest-step) path. Topic, phrase and
  structural nodes have no vector (`Hypergraph.node_vectors_of`: zero), so h is 1/2 from
  or towards them, the same for every node: A* is then breadth-first among them.
- Ties on f = g + h go to the smaller h, then to the earlier push.
- `max_depth` bounds g (nodes at that depth are not expanded), `max_passed_nodes` bounds
  the expansions; a pair whose target is not reached within them yields no path.
- All hyperedges joining two consecutive path nodes are retrieved (the paper keeps every
  triplet between them); each keeps the whole path as its chain, shown with the
  representative hyperedge of each step (a fact before a thesis before an episode).

How it runs: with unit steps and h in [0, 1], f = g + h orders the frontier depth by
depth, so a search pops (and expands) a whole depth at once, as array operations
(`_by_depths`), in the order a heap of every push gives; a heap search
(`_by_heap`) remains for the one tie that order does not reproduce (see there).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.personalai.hypergraph import Hypergraph, first_occurrences, smallest_first
from memory.personalai.traversal import Step, Traversal

ALGORITHM = "astar"
NO_VECTOR_H = np.float32(0.5)
"""h of a node without a vector (its zero vector's product with any goal is 0): the value
the einsum would give, set without gathering or multiplying the zero rows."""


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
        self._goals = hypergraph.node_vectors_of(list(self._column))
        self._neighbours: dict[int, np.ndarray] = {}
        n_nodes = hypergraph.n_nodes
        self._heuristic = np.zeros((len(self._column), n_nodes), np.float32)
        """Per target, h of every node towards it (where `_known`): a row per target, so
        one target's values of many nodes are a gather from one contiguous row."""
        self._known = np.zeros(n_nodes, bool)
        self._n_vectors = len(hypergraph.node_vectors)
        self.stamp = np.zeros(n_nodes, np.int64)
        """Per node, the number of the last search that pushed it."""
        self.parent = np.zeros(n_nodes, np.int64)
        """Per node, the node that pushed it in the search under way (`_by_depths`)."""
        self.cost = np.zeros(n_nodes, np.int64)
        """Per node, its cost in the search under way (`_by_heap`, where `stamp` says so)."""
        self.closed = np.zeros(n_nodes, np.int64)
        """Per node, the number of the last search that expanded it (`_by_heap`)."""
        self.searches = 0

    def of(self, node: int, target: int) -> tuple[np.ndarray, np.ndarray]:
        """(the node's neighbours, most recently met first; their heuristic to `target`)."""
        (neighbours,) = self.neighbour_lists([node])
        return neighbours, self.heuristic(neighbours, target)

    def neighbour_lists(self, nodes: Sequence[int]) -> list[np.ndarray]:
        """Each node's neighbours, most recently met first; those not met yet this query
        read off the hypergraph in one batch (`Hypergraph.neighbours_of`)."""
        missing = [node for node in dict.fromkeys(nodes) if node not in self._neighbours]
        if missing:
            self._neighbours.update(
                zip(missing, self._hypergraph.neighbours_of(missing), strict=True)
            )
        return [self._neighbours[node] for node in nodes]

    def heuristic(self, nodes: np.ndarray, target: int) -> np.ndarray:
        """h of `nodes` (distinct) towards `target`; a node's row of products with every
        target is computed when first asked for."""
        new = nodes[~self._known[nodes]]
        if len(new):
            self._known[new] = True
            held = new < self._n_vectors
            self._heuristic[:, new[~held]] = NO_VECTOR_H
            new = new[held]
            products = np.einsum("ij,kj->ik", self._hypergraph.node_vectors[new], self._goals)
            self._heuristic[:, new] = np.clip((1.0 - products) / 2.0, 0.0, 1.0).T
        return self._heuristic[self._column[target]][nodes]


def shortest_path(
    hypergraph: Hypergraph,
    start: int,
    target: int,
    params: AStarParams = AStarParams(),
    expansions: Expansions | None = None,
) -> tuple[list[int] | None, int, set[int]]:
    """(nodes of a cheapest start..target path or None, expansions, expanded nodes): the
    search by depths, or by a heap where a node at h = 1 makes their orders differ."""
    expansions = expansions or Expansions(hypergraph, [target])
    found = _by_depths(start, target, params, expansions)
    return found if found is not None else _by_heap(start, target, params, expansions)


def _by_depths(
    start: int, target: int, params: AStarParams, expansions: Expansions
) -> tuple[list[int] | None, int, set[int]] | None:
    """The search a depth at a time; None where a node at h = 1 could be popped.

    Every push from a node at depth g is at depth g + 1 with f in [g + 1, g + 2], so the
    heap pops depth by depth, and within a depth by h, then push order (f = g + h rises
    with h, and its ties go to the smaller h). Pushes are made once: a node already
    pushed (or expanded) in the search is never better at a deeper level, and among the
    nodes of one depth the first to expand pushes a common neighbour. So a depth's pops
    are the stable sort of its pushes by h, in the order its nodes expand (the
    concatenation of their neighbour lists), and only its first `max_passed_nodes -
    expanded + 1` can pop: popping the target returns its path, one more pop past the
    budget ends the search. The exception: a node at h = 1 (its vector opposite the
    target's) has f = g + 1, equal to a next-depth push at h = 0, which the heap pops
    first; then None is returned and the heap search runs
    (`tests/memory/test_frontier_differential.py` checks both against the loop)."""
    expansions.searches += 1
    search = expansions.searches
    expansions.stamp[start], expansions.parent[start] = search, start
    depth, nodes, heuristic = 0, np.array([start]), np.zeros(1)
    expanded: list[np.ndarray] = []
    count = 0
    while len(nodes):
        room = params.max_passed_nodes - count
        popped = nodes[: room + 1]
        if heuristic[len(popped) - 1] == 1.0:
            return None
        hit = np.flatnonzero(popped == target)
        if len(hit):
            expanded.append(popped[: hit[0]])
            return _walk_back(expansions, start, target), count + int(hit[0]), _union(expanded)
        popped = nodes[:room]
        expanded.append(popped)
        count += len(popped)
        if len(nodes) > room or depth >= params.max_depth:
            break
        depth += 1
        nodes, heuristic = _pushes(popped, target, expansions, params.max_passed_nodes - count + 1)
    return None, count, _union(expanded)


def _pushes(
    parents: np.ndarray, target: int, expansions: Expansions, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first `limit` nodes the `parents` (expanded in this order) push at the next
    depth, in the stable order of their h (`smallest_first` of the pushes in push order),
    with their h; each marked pushed in the search, by its parent. The pushes past
    `limit` are left unmarked: where there are any, the budget ends the search at this
    depth (`_by_depths`), so no later depth reads their marks."""
    lists = expansions.neighbour_lists(parents.tolist())
    if not lists:
        return np.zeros(0, np.int64), np.zeros(0)
    met = np.concatenate(lists)
    fresh = np.flatnonzero(expansions.stamp[met] != expansions.searches)
    at = fresh[first_occurrences(met[fresh], len(expansions.stamp))]  # a stamp per node
    met = met[at]
    heuristic = expansions.heuristic(met, target)
    heuristic[met == target] = 0.0
    kept = smallest_first(heuristic, limit)
    met, at = met[kept], at[kept]
    ends = np.cumsum([len(found) for found in lists])
    expansions.stamp[met] = expansions.searches
    expansions.parent[met] = parents[np.searchsorted(ends, at, side="right")]
    return met, heuristic[kept].astype(np.float64)


def _walk_back(expansions: Expansions, start: int, node: int) -> list[int]:
    path = [node]
    while path[-1] != start:
        path.append(int(expansions.parent[path[-1]]))
    return path[::-1]


def _union(parts: list[np.ndarray]) -> set[int]:
    return set(np.concatenate(parts).tolist()) if parts else set()


def _by_heap(
    start: int, target: int, params: AStarParams, expansions: Expansions
) -> tuple[list[int] | None, int, set[int]]:
    """The search popping one node at a time from a heap.

    The frontier is a heap of expansions rather than of nodes: an expansion's pushes are
    sorted once as arrays (by f, then h, then push order, the heap's own order) and only
    each one's next entry sits in the heap, so the pops come in the order a heap of every
    pushed node gives, without a Python push per neighbour. An expansion keeps only its
    best `max_passed_nodes - expanded + 1` pushes: each of them is a distinct node that
    must be popped (expanded, or found expanded) before any later one of the same
    expansion, and the budget ends the search before that many more pops, so the rest
    would never be popped (an exact cut, `tests/memory/test_frontier_differential.py`)."""
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
