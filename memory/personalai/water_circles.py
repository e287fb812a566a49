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
- k counts the other linked nodes among the fragment's member entities (the entities the
  fragment mentions), not a string match on its text.
- Order within a list: facts by ring, then by similarity to the question; fragments by k
  (descending), then ring, then similarity.
- `strict_filter`: a fragment with k = 0 (no other query entity in it) is dropped, when
  there is another query entity to look for (two or more linked nodes).
- `do_text_pruning` is off by default and unexplained; it is not implemented.
- Each retrieved hyperedge's chain is the ring path from its seed, ending at another linked
  node among its members when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.personalai.hypergraph import EPISODE, FACT, THESIS, Hypergraph
from memory.personalai.traversal import Step, Traversal

ALGORITHM = "water_circles"


@dataclass(frozen=True)
class WaterCirclesParams:
    """App. F defaults, plus the ring bound the paper does not give."""

    strict_filter: bool = True
    hyper_num: int = 15
    episodic_num: int = 15
    chain_triplets_num: int = 25
    other_triplets_num: int = 6
    do_text_pruning: bool = False
    max_depth: int = 3


@dataclass
class _Circles:
    """The state of every circle, as arrays: which nodes each seed's circle holds and how it
    reached them, and each hyperedge as a circle first crossed it (in which ring, by which
    seed's circle, from which node, towards which member; its chain is rebuilt only if it
    is kept), whether it joined circles (facts) and its count k (fragments)."""

    holds: np.ndarray
    """n_seeds x n_nodes: the node is inside the seed's circle."""
    parent_node: np.ndarray
    """n_seeds x n_nodes: the node the circle came from (-1: not reached, or the seed)."""
    parent_edge: np.ndarray
    crossed: np.ndarray
    """n_seeds x n_hyperedges: the seed's circle has crossed the hyperedge."""
    ring: np.ndarray
    """Per hyperedge: the ring of its first crossing (-1: never crossed)."""
    seed: np.ndarray
    node: np.ndarray
    shown: np.ndarray
    primary: np.ndarray
    k: np.ndarray

    @classmethod
    def start(cls, n_seeds: int, n_nodes: int, n_hyperedges: int) -> _Circles:
        def per_edge(fill: int) -> np.ndarray:
            return np.full(n_hyperedges, fill, np.int64)

        return cls(
            holds=np.zeros((n_seeds, n_nodes), bool),
            parent_node=np.full((n_seeds, n_nodes), -1, np.int64),
            parent_edge=np.full((n_seeds, n_nodes), -1, np.int64),
            crossed=np.zeros((n_seeds, n_hyperedges), bool),
            ring=per_edge(-1),
            seed=per_edge(-1),
            node=per_edge(-1),
            shown=per_edge(-1),
            primary=np.zeros(n_hyperedges, bool),
            k=per_edge(0),
        )


def water_circles(
    hypergraph: Hypergraph,
    linked: Sequence[int],
    similarity: np.ndarray,
    params: WaterCirclesParams = WaterCirclesParams(),
    node_name: Callable[[int], Any] = int,
) -> Traversal:
    """Rings from every node of `linked`; `similarity` (per hyperedge, to the question)
    orders hyperedges within a list.

    Each ring of each circle is one step of sparse operations: the frontier's hyperedges
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
    circle_count = circles.holds.sum(axis=0).astype(np.int64)
    is_seed = np.zeros(hypergraph.n_nodes, bool)
    is_seed[seeds] = True
    seeds_in = np.asarray(hypergraph.members @ is_seed.astype(np.float64)).round().astype(np.int64)
    frontier = [seeds[i : i + 1] for i in range(n_seeds)]
    rings = 0
    while rings < params.max_depth and any(len(f) for f in frontier):
        rings += 1
        for i in range(n_seeds):
            frontier[i] = _grow(
                hypergraph, circles, circle_count, is_seed, seeds_in, seeds, i, frontier[i], rings
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
        "crossed": int((circles.ring >= 0).sum()),
        "kept": len(kept),
        "primary": int(circles.primary[kept].sum()) if kept else 0,
        "circles_meet_at": [node_name(int(n)) for n in meeting],
    }
    return traversal


def _grow(
    hypergraph: Hypergraph,
    circles: _Circles,
    circle_count: np.ndarray,
    is_seed: np.ndarray,
    seeds_in: np.ndarray,
    seeds: np.ndarray,
    i: int,
    frontier: np.ndarray,
    ring: int,
) -> np.ndarray:
    """One ring of seed `i`'s circle from `frontier`; returns the nodes it newly reached,
    in the order the sequential loop would have reached them."""
    if not len(frontier):
        return frontier
    rows = hypergraph.incidence[frontier]
    node = np.repeat(frontier, np.diff(rows.indptr))
    edge = np.asarray(rows.indices, np.int64)
    fresh = ~circles.crossed[i, edge]
    node, edge = _first_of_each(node[fresh], edge[fresh], edge[fresh])
    if not len(edge):
        return edge
    circles.crossed[i, edge] = True
    members = hypergraph.members[edge]
    row = np.repeat(np.arange(len(edge)), np.diff(members.indptr))
    member = np.asarray(members.indices, np.int64)
    other = member != node[row]
    o_row, o_member = row[other], member[other]

    first = circles.ring[edge] < 0
    if first.any():
        shown = node.copy()
        any_row, any_at = np.unique(o_row, return_index=True)
        shown[any_row] = o_member[any_at]
        seed_row, seed_at = np.unique(o_row[is_seed[o_member]], return_index=True)
        shown[seed_row] = o_member[is_seed[o_member]][seed_at]
        new = edge[first]
        circles.ring[new], circles.seed[new] = ring, i
        circles.node[new], circles.shown[new] = node[first], shown[first]

    is_fact = hypergraph.kinds[edge] == FACT
    elsewhere = (circle_count[o_member] - circles.holds[i, o_member]) > 0
    joins = np.bincount(o_row, weights=elsewhere, minlength=len(edge)) > 0
    circles.primary[edge[is_fact & joins]] = True
    holds_seed = np.bincount(row, weights=member == seeds[i], minlength=len(edge)) > 0
    fragment = ~is_fact
    k = seeds_in[edge] - holds_seed
    circles.k[edge[fragment]] = np.maximum(circles.k[edge[fragment]], k[fragment])

    outside = ~circles.holds[i, o_member]
    via, reached = _first_of_each(o_row[outside], o_member[outside], o_member[outside])
    circles.holds[i, reached] = True
    circle_count[reached] += 1
    circles.parent_node[i, reached] = node[via]
    circles.parent_edge[i, reached] = edge[via]
    return reached


def _first_of_each(
    first: np.ndarray, second: np.ndarray, key: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (first, second) at the first occurrence of each `key`, in their order."""
    _, at = np.unique(key, return_index=True)
    at.sort()
    return first[at], second[at]


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
    similarity: np.ndarray,
    params: WaterCirclesParams,
    strict: bool,
) -> list[int]:
    """The hyperedges WaterCircles returns: N1 primary and N2 secondary facts, the top
    `hyper_num` theses and `episodic_num` episodes by k."""
    found = np.flatnonzero(circles.ring >= 0)
    kinds = hypergraph.kinds[found]
    ring = circles.ring[found]
    closeness = -np.asarray(similarity, np.float64)[found]
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
