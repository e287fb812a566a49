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
(`_by_heap`) remains for the one tie that order does not reproduce (see there). The
searches from one start share its breadth-first layers (`Layers`): which nodes a depth
pushes does not depend on the target, only their order does. At 100k facts (40 queries,
~60 pairs each, one process, thread time) A* took 17.0 ms a query before the layers and
the per-layer h, ~14.8 ms after, every path, count and expanded node the same.
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
    zeros (allocated untouched) and hold a value only where `stamp` (`ball`) is the number
    of the search (the layers) under way, so a search starts without clearing a
    whole-graph array."""

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
        self.ball = np.zeros(n_nodes, np.int64)
        """Per node, the number of the last `Layers` that holds it (`Layers.grow`)."""
        self.balls = 0
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
        self._know(nodes)
        return self._heuristic[self._column[target]][nodes]

    def heuristics(self, nodes: np.ndarray) -> np.ndarray:
        """h of `nodes` (distinct) towards every target, a row per target (`column`)."""
        self._know(nodes)
        return self._heuristic[:, nodes]

    def column(self, target: int) -> int:
        """The row of `target` in `heuristics`."""
        return self._column[target]

    def _know(self, nodes: np.ndarray) -> None:
        new = nodes[~self._known[nodes]]
        if len(new):
            self._known[new] = True
            held = new < self._n_vectors
            self._heuristic[:, new[~held]] = NO_VECTOR_H
            new = new[held]
            products = np.einsum("ij,kj->ik", self._hypergraph.node_vectors[new], self._goals)
            self._heuristic[:, new] = np.clip((1.0 - products) / 2.0, 0.0, 1.0).T


def shortest_path(
    hypergraph: Hypergraph,
    start: int,
    target: int,
    params: AStarParams = AStarParams(),
    expansions: Expansions | None = None,
    layers: Layers | None = None,
) -> tuple[list[int] | None, int, set[int]]:
    """(nodes of a cheapest start..target path or None, expansions, expanded nodes): the
    search by depths over the `layers` around `start` (shared by the searches from it), or
    by a heap where a node at h = 1 makes their orders differ."""
    expansions = expansions or Expansions(hypergraph, [target])
    layers = layers or Layers(start, expansions)
    found = _by_depths(target, params, expansions, layers)
    return found if found is not None else _by_heap(start, target, params, expansions)


class Layers:
    """The breadth-first layers around one start node, grown as the searches from it need
    them and shared by all of them: layer d holds the nodes d steps away (ascending), and
    each of its nodes' incoming edges from layer d - 1 (a neighbour-list entry: which
    parent, at which position of its list), grouped by node.

    A search by depths that goes past depth d has popped every node within d steps (a
    depth is left only when all of it was expanded), so the nodes it pushes at depth d + 1
    are layer d + 1, whatever its target; only their order depends on the target: the
    parents expand in their pop order, and a node is pushed by its first entry in the
    concatenation of their lists. So a search orders each layer by its target's h (ties by
    that first entry: the smallest of its entries' (parent's pop rank, position)), and the
    lists are concatenated, filtered of the inner nodes and grouped once per start, not
    once per pair (60 pairs a query from 11 linked nodes)."""

    def __init__(self, start: int, expansions: Expansions) -> None:
        expansions.balls += 1
        self._number = expansions.balls
        self._expansions = expansions
        expansions.ball[start] = self._number
        self.nodes = [np.array([start], np.int64)]
        self.heuristics = [expansions.heuristics(self.nodes[0])]
        """Per layer, its nodes' h towards every target (`Expansions.heuristics`): read
        once per layer, not once per search."""
        self._edges: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = [
            (np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), 1)
        ]
        """Per layer, its nodes' entries grouped by node: (parent's index in the layer
        before, position in the parent's list, where each node's group starts, a width
        above every position)."""

    def layer(
        self, depth: int
    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
        """Layer `depth`'s nodes and entries (grown from the layer before where new)."""
        while len(self.nodes) <= depth:
            self._grow()
        return self.nodes[depth], self._edges[depth]

    def _grow(self) -> None:
        expansions = self._expansions
        parents = self.nodes[-1]
        lists = expansions.neighbour_lists(parents.tolist())
        lengths = np.array([len(found) for found in lists], np.int64)
        met = np.concatenate(lists) if lists else np.zeros(0, np.int64)
        owner = np.repeat(np.arange(len(parents)), lengths)
        position = np.arange(len(met)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        fresh = np.flatnonzero(expansions.ball[met] != self._number)
        by_node = fresh[np.argsort(met[fresh], kind="stable")]
        met, owner, position = met[by_node], owner[by_node], position[by_node]
        starts = np.flatnonzero(np.r_[True, met[1:] != met[:-1]]) if len(met) else met
        nodes = met[starts]
        expansions.ball[nodes] = self._number
        width = int(lengths.max()) + 1 if len(lengths) else 1
        self.nodes.append(nodes)
        self.heuristics.append(expansions.heuristics(nodes))
        self._edges.append((owner, position, starts, width))


def _by_depths(
    target: int, params: AStarParams, expansions: Expansions, layers: Layers
) -> tuple[list[int] | None, int, set[int]] | None:
    """The search a depth at a time; None where a node at h = 1 could be popped.

    Every push from a node at depth g is at depth g + 1 with f in [g + 1, g + 2], so the
    heap pops depth by depth, and within a depth by h, then push order (f = g + h rises
    with h, and its ties go to the smaller h). Pushes are made once: a node already
    pushed (or expanded) in the search is never better at a deeper level, and among the
    nodes of one depth the first to expand pushes a common neighbour. So a depth's pops
    are the stable sort of its pushes by h, in the order its nodes expand (the
    concatenation of their neighbour lists: `Layers`), and only its first
    `max_passed_nodes - expanded + 1` can pop: popping the target returns its path, one
    more pop past the budget ends the search. The exception: a node at h = 1 (its vector
    opposite the target's) has f = g + 1, equal to a next-depth push at h = 0, which the
    heap pops first; then None is returned and the heap search runs
    (`tests/memory/test_frontier_differential.py` checks both against the loop)."""
    nodes, heuristic = layers.nodes[0], np.zeros(1)
    ranks = [np.zeros(1, np.int64)]
    """Per depth popped whole, each layer node's pop rank (the parents' order below)."""
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
            return _walk_back(layers, ranks, target), count + int(hit[0]), _union(expanded)
        popped = nodes[:room]
        expanded.append(popped)
        count += len(popped)
        if len(nodes) > room or len(ranks) > params.max_depth:
            break
        nodes, heuristic, rank = _pops(
            layers, ranks, target, expansions, params.max_passed_nodes - count + 1
        )
        ranks.append(rank)
    return None, count, _union(expanded)


def _pops(
    layers: Layers, ranks: list[np.ndarray], target: int, expansions: Expansions, limit: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first `limit` pops of the next depth (the stable sort of its pushes by h, in
    push order: by h, then first entry), their h, and every layer node's pop rank (only
    read where the whole layer pops)."""
    nodes, (owner, position, starts, width) = layers.layer(len(ranks))
    if not len(nodes):
        return nodes, np.zeros(0), nodes
    first = np.minimum.reduceat(ranks[-1][owner] * width + position, starts)
    heuristic = layers.heuristics[len(ranks)][expansions.column(target)].astype(np.float64)
    heuristic[nodes == target] = 0.0
    if limit >= len(nodes):
        order = np.lexsort((first, heuristic))
    else:
        kth = np.partition(heuristic, limit - 1)[limit - 1]
        head = np.flatnonzero(heuristic <= kth)
        order = head[np.lexsort((first[head], heuristic[head]))][:limit]
    rank = np.empty(len(nodes), np.int64)
    if len(order) == len(nodes):
        rank[order] = np.arange(len(order))
    return nodes[order], heuristic[order], rank


def _walk_back(layers: Layers, ranks: list[np.ndarray], node: int) -> list[int]:
    """The path to `node` (in the last layer popped): each node's parent is the one whose
    entry pushed it first (the smallest (pop rank, position) among its entries)."""
    depth = len(ranks) - 1
    nodes, _ = layers.layer(depth)
    at = int(np.searchsorted(nodes, node))
    path = [node]
    while depth > 0:
        owner, position, starts, width = layers.layer(depth)[1]
        end = int(starts[at + 1]) if at + 1 < len(starts) else len(owner)
        entries = slice(int(starts[at]), end)
        keys = ranks[depth - 1][owner[entries]] * width + position[entries]
        at = int(owner[entries][np.argmin(keys)])
        depth -= 1
        path.append(int(layers.nodes[depth][at]))
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
    layers: Layers | None = None
    for start, target in itertools.combinations(linked, 2):
        if layers is None or int(layers.nodes[0][0]) != start:
            layers = Layers(start, expansions)
        path, expanded, closed = shortest_path(
            hypergraph, start, target, params, expansions, layers
        )
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
