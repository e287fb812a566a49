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
(`_all_by_depths`), in the order a heap of every push gives; a heap search
(`_by_heap`) remains for the one tie that order does not reproduce (see there). The
searches from one start share its breadth-first layers (`Layers`): which nodes a depth
pushes does not depend on the target, only their order does, so they run together, a
row of arrays per target, until each finds its target or the budget cuts a depth (where
only the nodes before its last pop are wanted: a partition of h, not a sort). A node's
products with the targets' vectors are taken once a query (`Expansions`), its neighbour
list is a slice of the hypergraph's adjacency (`Hypergraph.adjacency`, built once). At
100k facts (40 queries, ~60 pairs each from ~11 linked nodes, in the query flow, thread
time) A* took 17.0 ms a query before the layers and the per-layer h, ~14.8 ms after
them, ~9 ms with the searches run together and the adjacency kept, every path, count
and expanded node the same (`tests/memory/test_personalai_astar_searches.py`).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.csr import ranges
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
    and their heuristic towards the targets, and the per-node state of the search under
    way. The searches between every pair of linked nodes expand the same nodes again and
    again (the linked nodes and the hubs near them), and neighbourhoods overlap, so each
    node's vector is multiplied with a target's once a query, by an `einsum` (not BLAS:
    the same bits in whatever batch); its neighbour list is a slice of the hypergraph's
    adjacency (`spans`). The per-node arrays start as zeros (allocated untouched) and
    hold a value only where `stamp` is the number of the search under way, so a search
    starts without clearing a whole-graph array."""

    def __init__(self, hypergraph: Hypergraph, targets: Sequence[int]) -> None:
        self._hypergraph = hypergraph
        self._column = {int(t): i for i, t in enumerate(dict.fromkeys(targets))}
        n_nodes = hypergraph.n_nodes
        self._n_vectors = len(hypergraph.node_vectors)
        columns = np.fromiter(self._column, np.int64, len(self._column))
        held = columns < self._n_vectors
        self._slot = np.where(held, np.cumsum(held) - 1, -1)
        """Per column, its target's row of `_goals`; -1 for a target without a vector
        (h = 1/2 from every node towards it, nothing to multiply)."""
        self._goals = np.asarray(hypergraph.node_vectors[columns[held]], np.float32)
        self._heuristic = np.zeros((self._n_vectors, len(self._goals)), np.float32)
        """Per node with a vector, its h towards each target with one (a row per node:
        a node's products are written at once, a layer's rows gathered at once)."""
        self._known = np.zeros(self._n_vectors, np.int64)
        """Per node with a vector, how many of the last goals its row holds: the searches
        from the linked node i go to the nodes after it, so a row computed for them holds
        every goal a later start needs."""
        self._indptr, self.neighbours = hypergraph.adjacency
        """Every node's neighbour list (`Hypergraph.adjacency`)."""
        self.n_nodes = n_nodes
        self.stamp = np.zeros(n_nodes, np.int64)
        """Per node, the number of the last search that pushed it."""
        self.cost = np.zeros(n_nodes, np.int64)
        """Per node, its cost in the search under way (`_by_heap`, where `stamp` says so)."""
        self.closed = np.zeros(n_nodes, np.int64)
        """Per node, the number of the last search that expanded it (`_by_heap`)."""
        self.searches = 0

    def of(self, node: int, target: int) -> tuple[np.ndarray, np.ndarray]:
        """(the node's neighbours, most recently met first; their heuristic to `target`)."""
        first, end = self._indptr[node], self._indptr[node + 1]
        neighbours = self.neighbours[first:end].astype(np.int64)
        return neighbours, self.heuristic(neighbours, target)

    def spans(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each node's neighbour list lies in `neighbours` (first entry, count)."""
        first = self._indptr[nodes]
        return first, self._indptr[nodes + 1] - first

    def heuristic(self, nodes: np.ndarray, target: int) -> np.ndarray:
        """h of `nodes` (distinct) towards `target`."""
        return self.heuristics(nodes, np.array([self._column[target]]))[0]

    def heuristics(self, nodes: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """h of `nodes` (distinct) towards the targets of `columns` (`column`), a row per
        column; a node's products with the goals a search from here on can need are
        computed when first asked for."""
        slots = self._slot[columns]
        found = np.full((len(columns), len(nodes)), NO_VECTOR_H, np.float32)
        towards = np.flatnonzero(slots >= 0)
        if not len(towards):
            return found
        held = np.flatnonzero(nodes < self._n_vectors)
        if not len(held):
            return found
        vectored = nodes[held] if len(held) < len(nodes) else nodes
        self._know(vectored, int(slots[towards].min()))
        rows = self._heuristic[vectored][:, slots[towards]].T
        if len(towards) == len(columns) and len(held) == len(nodes):
            return np.ascontiguousarray(rows)
        found[np.ix_(towards, held)] = rows
        return found

    def column(self, target: int) -> int:
        """The row of `target` in `heuristics`."""
        return self._column[target]

    def slots(self, targets: np.ndarray) -> np.ndarray:
        """Per target, its goal (`layer_heuristics`), -1 for a target without a vector."""
        return self._slot[[self._column[int(t)] for t in targets]]

    def layer_heuristics(self, nodes: np.ndarray, slots: np.ndarray, shared: bool) -> np.ndarray:
        """h of `nodes` (ascending) towards the goals `slots`, a row per goal, and a last
        row of 1/2 where `shared` (towards the targets without a vector)."""
        found = np.empty((len(slots) + shared, len(nodes)), np.float32)
        held = int(np.searchsorted(nodes, self._n_vectors))
        found[:, held:] = NO_VECTOR_H
        if shared:
            found[-1] = NO_VECTOR_H
        if held and len(slots):
            vectored = nodes[:held]
            self._know(vectored, int(slots.min()))
            found[: len(slots), :held] = self._heuristic[vectored][:, slots].T
        return found

    def _know(self, nodes: np.ndarray, slot: int) -> None:
        """Have the rows of `nodes` (with vectors) hold the goals from `slot` on: each
        node's products with the goals it lacks (`astar` asks in the order of the starts,
        each time for fewer goals, so a row lacks none; `shortest_path` may ask in any)."""
        wanted = len(self._goals) - slot
        known = self._known[nodes]
        lacking = known < wanted
        if not lacking.any():
            return
        nodes, known = nodes[lacking], known[lacking]
        self._known[nodes] = wanted
        distinct = np.unique(known).tolist()
        for have in distinct:
            new = nodes if len(distinct) == 1 else nodes[known == have]
            vectors = self._hypergraph.node_vectors[new]
            goals = slice(slot, len(self._goals) - have)
            products = np.einsum("ij,kj->ik", vectors, self._goals[goals])
            self._heuristic[new, goals] = np.clip((1.0 - products) / 2.0, 0.0, 1.0)


Found = tuple[list[int] | None, int, list[np.ndarray]]
"""(nodes of a cheapest start..target path or None, expansions, the expanded nodes in
parts)."""


def shortest_path(
    hypergraph: Hypergraph,
    start: int,
    target: int,
    params: AStarParams = AStarParams(),
    expansions: Expansions | None = None,
    layers: Layers | None = None,
) -> tuple[list[int] | None, int, set[int]]:
    """(nodes of a cheapest start..target path or None, expansions, expanded nodes)."""
    expansions = expansions or Expansions(hypergraph, [target])
    layers = layers or Layers(start, expansions)
    found = _by_depths(target, params, expansions, layers)
    return found if found is not None else _by_heap(start, target, params, expansions)


def _by_depths(
    target: int, params: AStarParams, expansions: Expansions, layers: Layers
) -> tuple[list[int] | None, int, set[int]] | None:
    """The search to one target by depths (`_all_by_depths`); None where the heap search
    must run."""
    (found,) = _all_by_depths(np.array([target], np.int64), params, expansions, layers)
    return None if found is None else (found[0], found[1], _union(found[2]))


def shortest_paths(
    start: int,
    targets: Sequence[int],
    params: AStarParams,
    expansions: Expansions,
    layers: Layers | None = None,
) -> list[Found]:
    """The searches from `start` to each of `targets` (distinct): by depths, all of
    them at once over the `layers` around `start`, or by a heap for a target where a node
    at h = 1 makes their orders differ."""
    layers = layers or Layers(start, expansions)
    found = _all_by_depths(np.asarray(targets, np.int64), params, expansions, layers)
    return [
        each if each is not None else _heap_found(start, int(target), params, expansions)
        for target, each in zip(targets, found, strict=True)
    ]


def _heap_found(start: int, target: int, params: AStarParams, expansions: Expansions) -> Found:
    path, expanded, closed = _by_heap(start, target, params, expansions)
    return path, expanded, [np.fromiter(closed, np.int64, len(closed))]


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
        self._expansions = expansions
        self._inside = np.zeros(expansions.n_nodes, bool)
        """Per node, whether a layer grown so far holds it."""
        self._inside[start] = True
        self.nodes = [np.array([start], np.int64)]
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
        first, lengths = expansions.spans(parents)
        met = expansions.neighbours[ranges(first, lengths)].astype(np.int64)
        owners = np.repeat(np.arange(len(parents)), lengths)
        fresh = np.flatnonzero(~self._inside[met])
        met, by_node = _by_node(met[fresh], len(self._inside))
        by_node = fresh[by_node]
        owner = owners[by_node]
        position = by_node - (np.cumsum(lengths) - lengths)[owner]
        new = np.ones(len(met), bool)
        np.not_equal(met[1:], met[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        nodes = met[starts]
        self._inside[nodes] = True
        width = int(lengths.max()) + 1 if len(lengths) else 1
        self.nodes.append(nodes)
        self._edges.append((owner, position, starts, width))


def _by_node(values: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """(`values` sorted, their positions in that order, equal values by position: the
    stable argsort) for ints in [0, bound): values and positions sorted as one int64 key
    (distinct keys: any sort is stable), where they fit."""
    size = len(values)
    if not size or bound * size >= 1 << 62:
        order = np.argsort(values, kind="stable")
        return values[order], order
    ordered = np.sort(values * size + np.arange(size))
    sorted_values = ordered // size
    return sorted_values, ordered - sorted_values * size


ONE_BITS = int(np.float32(1.0).view(np.int32))
"""The bits of h = 1 (a float32 in [0, 1] orders as its bits read as an int)."""


def _all_by_depths(
    targets: np.ndarray, params: AStarParams, expansions: Expansions, layers: Layers
) -> list[Found | None]:
    """The searches to every target a depth at a time, all together; None for a target
    where a node at h = 1 could be popped.

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
    (`tests/memory/test_frontier_differential.py` checks both against the loop).

    Until a search finds its target it pops whole layers, the same for every target, so
    all of them advance together, a row of arrays per target (`_Depth`). The targets
    without a vector share one row: h is 1/2 from every node towards each of them (but
    itself, at 0, popped first where it lies), so their searches order every layer alike,
    by first entry alone."""
    found: list[Found | None] = [None] * len(targets)
    slots = expansions.slots(targets)
    vectored = np.flatnonzero(slots >= 0)
    row_of = np.full(len(targets), len(vectored), np.int64)
    row_of[vectored] = np.arange(len(vectored))
    n_rows = len(vectored) + int(len(vectored) < len(targets))
    waiting = np.arange(len(targets))
    nodes, entries = layers.layer(0)
    previous = np.zeros((n_rows, 1), np.int64)
    ranks: list[np.ndarray] = []
    """Per depth popped whole, each row's pop rank of each of its nodes."""
    parts: list[np.ndarray] = []
    count = 0
    while True:
        depth = len(ranks)
        room = params.max_passed_nodes - count
        rows = np.unique(row_of[waiting])
        if depth:
            heuristic = expansions.layer_heuristics(
                nodes, slots[vectored[rows[rows < len(vectored)]]], rows[-1] == len(vectored)
            )
        else:
            heuristic = np.zeros((len(rows), 1), np.float32)
        wanted = targets[waiting]
        at = np.minimum(np.searchsorted(nodes, wanted), len(nodes) - 1)
        present = nodes[at] == wanted
        local = np.searchsorted(rows, row_of[waiting])
        own = present & (row_of[waiting] < len(vectored))
        heuristic[local[own], at[own]] = 0.0  # the target's own h
        here = _Depth(nodes, entries, heuristic, previous[rows], min(len(nodes), room + 1))
        ending = len(nodes) > room or depth >= params.max_depth
        resolved = np.zeros(len(waiting), bool)
        for i in np.flatnonzero(present | here.opposite[local] | ending).tolist():
            index, row = int(waiting[i]), int(local[i])
            resolved[i] = True
            if here.opposite[row]:
                continue  # left to the heap search
            position = here.position(row, int(at[i]), bool(own[i])) if present[i] else None
            if position is not None:
                before = here.first_pops(row, position)
                walked = [rank[row_of[index]] for rank in ranks]
                path = _walk_back(layers, walked, depth, int(targets[index]))
                found[index] = (path, count + position, [*parts, before])
            else:  # ending: a depth the budget cuts before the target ends too
                popped = here.first_pops(row, min(len(nodes), room))
                found[index] = (None, count + min(len(nodes), room), [*parts, popped])
        waiting = waiting[~resolved]
        if not len(waiting):
            return found
        count += len(nodes)
        parts.append(nodes)
        previous = np.empty((n_rows, len(nodes)), np.int64)
        previous[rows] = here.ranks()
        ranks.append(previous)
        nodes, entries = layers.layer(depth + 1)
        if not len(nodes):
            for index in waiting.tolist():
                found[index] = (None, count, list(parts))
            return found


class _Depth:
    """One depth of the searches by depths, a row per search (target): its nodes' h
    (`bits`: the float32's bits, which order as h does) and first entries (each the
    smallest (parent's pop rank, position) among its entries: `Layers`), and the first
    `pops` of each row's order by (h, first entry).

    A depth that pops whole needs every row's full order (the ranks the next depth's first
    entries read); one the budget cuts needs only which nodes come first. There h decides
    all but ties: the `pops`-th smallest h (one partition) has every node below it popped
    before it; where that h is one node's alone, it is the last pop and no first entry
    is read. Ties (the targets without a vector: h = 1/2 everywhere) order by first
    entries, computed for that row alone."""

    def __init__(
        self,
        nodes: np.ndarray,
        entries: tuple[np.ndarray, np.ndarray, np.ndarray, int],
        heuristic: np.ndarray,
        previous: np.ndarray,
        pops: int,
    ) -> None:
        self._entries = entries
        self._previous = previous
        self._pops = pops
        self.nodes = nodes
        self.bits = (heuristic + np.float32(0.0)).view(np.int32)  # -0.0 as 0.0
        self._whole = pops == len(nodes)
        self._keys: dict[int, np.ndarray] = {}
        if self._whole:
            self._order: np.ndarray | None = None
            self._key = _keys(self.bits, self._firsts(previous))
            self._order = np.argsort(self._key, axis=1)
            last = self._key[np.arange(len(self._key)), self._order[:, -1]]
            self.opposite = (last >> 32) == ONE_BITS
        else:
            self._kth = np.partition(self.bits, pops - 1, axis=1)[:, pops - 1]
            self._single = (self.bits == self._kth[:, None]).sum(axis=1) == 1
            self.opposite = self._kth == ONE_BITS

    def _firsts(self, previous: np.ndarray) -> np.ndarray:
        owner, position, starts, width = self._entries
        return np.minimum.reduceat(previous[:, owner] * width + position, starts, axis=1)

    def key(self, row: int) -> np.ndarray:
        """Row `row`'s (h, first entry) keys (`_keys`)."""
        if self._whole:
            return self._key[row]
        if row not in self._keys:
            first = self._firsts(self._previous[row : row + 1])
            self._keys[row] = _keys(self.bits[row : row + 1], first)[0]
        return self._keys[row]

    def position(self, row: int, at: int, own: bool) -> int | None:
        """The pop position of the target at `at` in the row, None where the budget cuts
        the depth before it. At h = 0 (its own row), it is first unless another node has
        a vector equal to its."""
        bits = self.bits[row]
        if own and (self._pops >= len(bits) or bits[at] < self._kth[row]):
            if np.count_nonzero(bits == 0) == 1:
                return 0
        elif not own:
            return 0  # a target without a vector: at 0, the others at 1/2
        key = self.key(row)
        if not self._whole and key[at] > self._last(row, key):
            return None
        return int(np.count_nonzero(key < key[at]))

    def first_pops(self, row: int, count: int) -> np.ndarray:
        """The row's first `count` pops (`count` at most `pops`; as a set, ascending)."""
        if count >= len(self.nodes):
            return self.nodes
        if self._whole:
            return self.nodes[np.sort(self._order[row, :count])]
        if count == self._pops - 1 and self._single[row]:
            return self.nodes[self.bits[row] < self._kth[row]]
        key = self.key(row)
        if count == 0:
            return self.nodes[:0]
        below = np.partition(key, count - 1)[count - 1]
        return self.nodes[key <= below]

    def _last(self, row: int, key: np.ndarray) -> int:
        return int(np.partition(key, self._pops - 1)[self._pops - 1])

    def ranks(self) -> np.ndarray:
        """Every row's pop rank of each node (a depth popped whole)."""
        return _ranks(self._order)


def _keys(bits: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Per (row, node), an int64 ordering as (h, first entry): h's float32 bits (h in
    [0, 1]) above the first entry, where the first entries fit in 32 bits; else above
    their rank in the row (the same order: a row's first entries are distinct)."""
    if first.size and int(first.max()) >= 1 << 32:
        first = _ranks(np.argsort(first, axis=1))
    return (bits.astype(np.int64) << 32) | first


def _ranks(order: np.ndarray) -> np.ndarray:
    """Per row, each column's position in `order` (a row-wise permutation)."""
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(order.shape[1])[None, :], axis=1)
    return rank


def _walk_back(layers: Layers, ranks: list[np.ndarray], depth: int, node: int) -> list[int]:
    """The path to `node` (in layer `depth`): each node's parent is the one whose entry
    pushed it first (the smallest (pop rank, position) among its entries, `ranks` per
    depth before)."""
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
    visited = np.zeros(hypergraph.n_nodes, bool)
    names = [node_name(node) for node in linked]
    for i, start in enumerate(linked[:-1]):
        targets = linked[i + 1 :]
        marked: set[int] = set()  # the layers popped whole are parts of every search
        for j, found in enumerate(shortest_paths(start, targets, params, expansions), i + 1):
            path, expanded, parts = found
            for part in parts:
                if id(part) not in marked:
                    marked.add(id(part))
                    visited[part] = True
            pairs.append(
                {
                    "from": names[i],
                    "to": names[j],
                    "path": [node_name(n) for n in path] if path else None,
                    "expanded": expanded,
                }
            )
            if not path:
                continue
            visited[path] = True
            joins = [hypergraph.joining(u, v) for u, v in itertools.pairwise(path)]
            chain = tuple(
                Step(int(_representative(hypergraph, j)), u, v)
                for j, (u, v) in zip(joins, itertools.pairwise(path), strict=True)
            )
            for join in joins:
                for hyperedge in join.tolist():
                    traversal.retrieve(ALGORITHM, hyperedge, chain)
    traversal.visited = set(np.flatnonzero(visited).tolist())
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
