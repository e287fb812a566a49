"""PersonalAI's WaterCircles retriever: breadth-first rings spreading from every linked query
node at once; triplets where two circles meet come first.

Paper (§3, App. F): from all query nodes at once, first their adjacent vertices, then
iterative expansion; triplets formed where paths from different entities intersect go to
a primary list, all traversed triplets to a secondary list; N1 of the first and N2 of the
second are returned. With thesis ("hyper") and episodic connections, every text fragment
reached is examined for occurrences of the other query entities (those distinct from the
entity whose path reached it), and hyper and episodic fragments are sorted by that count k,
descending. Defaults: `strict_filter = True`, `hyper_num = 15`, `episodic_num = 15`,
`chain_triplets_num = 25`, `other_triplets_num = 6`, `do_text_pruning = False`.

Choices where the paper is silent:
- Stop rule: rings stop at `max_depth` = 3 (or when no circle can grow); a ring is one
  hop across a hyperedge.
- The simple triplets are the fact hyperedges: primary when the node they reach is already
  inside another seed's circle (N1 = `chain_triplets_num`), secondary otherwise
  (N2 = `other_triplets_num`). Hyper fragments are the LLM theses (`hyper_num`), episodic
  fragments the episodes (`episodic_num`).
- k counts the other linked nodes among the fragment's members (the entities, topics,
  phrases and structural nodes an episode links to), not a string match on its text.
- Order within a list: facts by ring, then by similarity to the question; fragments by k
  (descending), then ring, then similarity.
- `strict_filter`: a fragment with k = 0 (no other query entity in it) is dropped, when
  there is another query entity to look for (two or more linked nodes).
- `do_text_pruning` is off by default and unexplained; it is not implemented.
- Each retrieved hyperedge's chain is the ring path from its seed, ending at another linked
  node among its members when there is one.
- Hubs (`max_ring_crossings`, 64): in one ring a circle crosses at most this many of the
  hyperedges its frontier could cross, the most similar to the question (ties in the
  loop's order), the others staying uncrossed for a later ring or another circle. The
  paper's graphs are small; at a million facts entities of degree 15,000 made three
  unbounded rings cross half a million hyperedges a query (6.5 s; 0.43 s with the budget,
  on the synthetic 1M-fact bench with its other exact changes). The budget is a
  fixed multiple of what the method keeps: 64 is just above the 61 hyperedges the four
  lists return (25 + 6 + 15 + 15), so one ring of one circle can still fill them all.
  It bounds a ring's new nodes by 64 x (members - 1), and so the next ring's work. With
  None the rings are unbounded (the paper's loop, `tests/memory/water_circles_reference`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.personalai.hypergraph import (
    EPISODE,
    FACT,
    THESIS,
    EdgeSimilarity,
    Hypergraph,
    first_occurrences,
    row_entries,
    score_hyperedges_of,
    smallest_first,
)
from memory.personalai.traversal import Step, Traversal

ALGORITHM = "water_circles"
MAX_RING_CROSSINGS = 64


@dataclass(frozen=True)
class WaterCirclesParams:
    """App. F defaults, plus the ring bound and the hub budget the paper does not give."""

    strict_filter: bool = True
    hyper_num: int = 15
    episodic_num: int = 15
    chain_triplets_num: int = 25
    other_triplets_num: int = 6
    do_text_pruning: bool = False
    max_depth: int = 3
    max_ring_crossings: int | None = MAX_RING_CROSSINGS


@dataclass
class _Circles:
    """The state of every circle, as arrays: which nodes each seed's circle holds and how it
    reached them, and each hyperedge as a circle first crossed it (in which ring, by which
    seed's circle, from which node, towards which member; its chain is rebuilt only if it
    is kept), whether it joined circles (facts) and its count k (fragments).

    Every array starts as zeros (allocated untouched, so a query pays for the entries its
    rings write, not for the whole graph); an entry is read only where `holds` or `ring`
    says it was written."""

    holds: np.ndarray
    """n_seeds x n_nodes: the node is inside the seed's circle."""
    parent_node: np.ndarray
    """n_seeds x n_nodes: the node the circle came from (read where held, not the seed)."""
    parent_edge: np.ndarray
    crossed: np.ndarray
    """n_seeds x n_hyperedges: the seed's circle has crossed the hyperedge."""
    ring: np.ndarray
    """Per hyperedge: the ring of its first crossing (rings count from 1; 0: never)."""
    seed: np.ndarray
    node: np.ndarray
    shown: np.ndarray
    primary: np.ndarray
    k: np.ndarray

    @classmethod
    def start(cls, n_seeds: int, n_nodes: int, n_hyperedges: int) -> _Circles:
        def per_edge() -> np.ndarray:
            return np.zeros(n_hyperedges, np.int64)

        return cls(
            holds=np.zeros((n_seeds, n_nodes), bool),
            parent_node=np.zeros((n_seeds, n_nodes), np.int64),
            parent_edge=np.zeros((n_seeds, n_nodes), np.int64),
            crossed=np.zeros((n_seeds, n_hyperedges), bool),
            ring=per_edge(),
            seed=per_edge(),
            node=per_edge(),
            shown=per_edge(),
            primary=np.zeros(n_hyperedges, bool),
            k=per_edge(),
        )


def water_circles(
    hypergraph: Hypergraph,
    linked: Sequence[int],
    similarity: np.ndarray | EdgeSimilarity,
    params: WaterCirclesParams = WaterCirclesParams(),
    node_name: Callable[[int], Any] = int,
) -> Traversal:
    """Rings from every node of `linked`; `similarity` (per hyperedge, to the question)
    orders hyperedges within a list and picks a ring's crossings under the hub budget.

    Each ring of each circle is one step of array operations: the frontier's hyperedges
    are a row selection of the incidence, their members a row selection of its transpose,
    and the sequential rule (a circle crosses a hyperedge once, from the first frontier
    node that has it; a node joins a circle from the first hyperedge that reaches it) is
    kept by taking first occurrences in that order. Seeds grow one after another within a
    ring, so a fact is primary when a member lies in another circle as the circles stand
    when it is crossed, as in the paper's loop."""
    seeds = np.array(list(dict.fromkeys(linked)), np.int64)
    n_seeds = len(seeds)
    circles = _Circles.start(n_seeds, hypergraph.n_nodes, hypergraph.n_hyperedges)
    circles.holds[np.arange(n_seeds), seeds] = True
    circle_count = np.zeros(hypergraph.n_nodes, np.int64)
    circle_count[seeds] = 1
    is_seed = np.zeros(hypergraph.n_nodes, bool)
    is_seed[seeds] = True
    frontier = [seeds[i : i + 1] for i in range(n_seeds)]
    rings = 0
    while rings < params.max_depth and any(len(f) for f in frontier):
        rings += 1
        for i in range(n_seeds):
            crossing = _crossing(hypergraph, circles, similarity, params, i, frontier[i])
            frontier[i] = _grow(
                hypergraph, circles, circle_count, is_seed, seeds, i, crossing, rings
            )
    kept = _select(
        hypergraph, circles, similarity, params, strict=params.strict_filter and n_seeds > 1
    )
    reached = np.flatnonzero(circle_count > 0)
    traversal = Traversal(visited=set(reached.tolist()))
    for hyperedge in kept:
        i, node = int(circles.seed[hyperedge]), int(circles.node[hyperedge])
        chain = (
            *_ring_path(circles, i, int(seeds[i]), node),
            Step(hyperedge, node, int(circles.shown[hyperedge])),
        )
        traversal.retrieve(ALGORITHM, hyperedge, chain)
    meeting = np.flatnonzero(circle_count > 1)
    traversal.details[ALGORITHM] = {
        **asdict(params),
        "rings": rings,
        "crossed": int((circles.ring > 0).sum()),
        "kept": len(kept),
        "primary": int(circles.primary[kept].sum()) if kept else 0,
        "circles_meet_at": [node_name(int(n)) for n in meeting],
    }
    return traversal


def _crossing(
    hypergraph: Hypergraph,
    circles: _Circles,
    similarity: np.ndarray | EdgeSimilarity,
    params: WaterCirclesParams,
    i: int,
    frontier: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The (frontier node, hyperedge) pairs seed `i`'s circle crosses in this ring, in the
    loop's order: each hyperedge it has not crossed, from the first frontier node that has
    it; under `max_ring_crossings`, only that many of them, the most similar."""
    score_hyperedges_of(similarity, frontier)
    at, edge = row_entries(hypergraph.incidence, frontier)
    node = frontier[at]
    fresh = ~circles.crossed[i, edge]
    node, edge = node[fresh], edge[fresh]
    first = first_occurrences(edge, hypergraph.n_hyperedges)
    node, edge = node[first], edge[first]
    budget = params.max_ring_crossings
    if budget is not None and len(edge) > budget:
        best = np.sort(smallest_first(-similarity[edge], budget))
        node, edge = node[best], edge[best]
    return node, edge


def _grow(
    hypergraph: Hypergraph,
    circles: _Circles,
    circle_count: np.ndarray,
    is_seed: np.ndarray,
    seeds: np.ndarray,
    i: int,
    crossing: tuple[np.ndarray, np.ndarray],
    ring: int,
) -> np.ndarray:
    """Seed `i`'s circle crosses the `crossing` pairs in ring `ring`; returns the nodes it
    newly reached, in the order the sequential loop would have reached them."""
    node, edge = crossing
    if not len(edge):
        return edge
    circles.crossed[i, edge] = True
    row, member = row_entries(hypergraph.members, edge)
    other = member != node[row]
    o_row, o_member = row[other], member[other]

    first = circles.ring[edge] == 0
    if first.any():
        shown = node.copy()
        any_row, any_at = _runs(o_row)
        shown[any_row] = o_member[any_at]
        seed_row, seed_at = _runs(o_row[is_seed[o_member]])
        shown[seed_row] = o_member[is_seed[o_member]][seed_at]
        new = edge[first]
        circles.ring[new], circles.seed[new] = ring, i
        circles.node[new], circles.shown[new] = node[first], shown[first]

    is_fact = hypergraph.kinds[edge] == FACT
    elsewhere = (circle_count[o_member] - circles.holds[i, o_member]) > 0
    joins = np.bincount(o_row, weights=elsewhere, minlength=len(edge)) > 0
    circles.primary[edge[is_fact & joins]] = True
    other_seed = is_seed[member] & (member != seeds[i])
    k = np.bincount(row[other_seed], minlength=len(edge))
    fragment = ~is_fact
    circles.k[edge[fragment]] = np.maximum(circles.k[edge[fragment]], k[fragment])

    outside = ~circles.holds[i, o_member]
    o_row, o_member = o_row[outside], o_member[outside]
    at = first_occurrences(o_member, hypergraph.n_nodes)
    via, reached = o_row[at], o_member[at]
    circles.holds[i, reached] = True
    circle_count[reached] += 1
    circles.parent_node[i, reached] = node[via]
    circles.parent_edge[i, reached] = edge[via]
    return reached


def _runs(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a non-decreasing array: (each distinct value, the position of its first
    occurrence), as `np.unique(rows, return_index=True)` gives for sorted input."""
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else rows
    return rows[starts], starts


def _ring_path(circles: _Circles, i: int, seed: int, node: int) -> tuple[Step, ...]:
    """The steps by which the circle of seed `i` reached `node` (empty for the seed)."""
    steps = []
    while node != seed:
        previous = int(circles.parent_node[i, node])
        steps.append(Step(int(circles.parent_edge[i, node]), previous, node))
        node = previous
    return tuple(reversed(steps))


def _select(
    hypergraph: Hypergraph,
    circles: _Circles,
    similarity: np.ndarray | EdgeSimilarity,
    params: WaterCirclesParams,
    strict: bool,
) -> list[int]:
    """The hyperedges WaterCircles returns: N1 primary and N2 secondary facts, the top
    `hyper_num` theses and `episodic_num` episodes by k."""
    found = np.flatnonzero(circles.ring > 0)
    kinds = hypergraph.kinds[found]
    ring = circles.ring[found]
    closeness = -similarity[found].astype(np.float64)
    k = circles.k[found]

    def ordered(mask: np.ndarray, by_k: bool) -> np.ndarray:
        keys = (found[mask], closeness[mask], ring[mask], *((-k[mask],) if by_k else ()))
        return found[mask][np.lexsort(keys)]

    is_fact, primary = kinds == FACT, circles.primary[found]
    dropped = strict & (k == 0)
    return [
        *ordered(is_fact & primary, False)[: params.chain_triplets_num].tolist(),
        *ordered(is_fact & ~primary, False)[: params.other_triplets_num].tolist(),
        *ordered((kinds == THESIS) & ~dropped, True)[: params.hyper_num].tolist(),
        *ordered((kinds == EPISODE) & ~dropped, True)[: params.episodic_num].tolist(),
    ]
