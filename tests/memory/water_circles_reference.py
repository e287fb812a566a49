"""Test oracle: WaterCircles as it was before its frontier ran on sparse operations (one
hyperedge and one member at a time, in Python dicts and sets), kept verbatim so the
differential test can check that `memory.personalai.water_circles` returns identical
hits, chains and details. Not product code."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.personalai.hypergraph import EPISODE, FACT, THESIS, Hypergraph
from memory.personalai.traversal import Step, Traversal
from memory.personalai.water_circles import WaterCirclesParams

ALGORITHM = "water_circles"


@dataclass
class _Reached:
    """One hyperedge as a circle first crossed it: in which ring, by which seed's circle,
    from which node, towards which member (its chain is rebuilt only if it is kept)."""

    ring: int
    seed: int
    node: int
    shown: int
    primary: bool = False
    k: int = 0


def water_circles(
    hypergraph: Hypergraph,
    linked: Sequence[int],
    similarity: np.ndarray,
    params: WaterCirclesParams,
    node_name: Callable[[int], Any] = int,
) -> Traversal:
    """Rings from every node of `linked`; `similarity` (per hyperedge, to the question)
    orders hyperedges within a list."""
    seeds = list(dict.fromkeys(linked))
    seed_set = set(seeds)
    reached_by: dict[int, set[int]] = {s: {s} for s in seeds}
    parent: dict[tuple[int, int], tuple[int, int]] = {}
    """(seed, node) -> (the node its circle came from, the hyperedge crossed)."""
    frontier = {s: [s] for s in seeds}
    crossed: dict[int, set[int]] = {s: set() for s in seeds}
    found: dict[int, _Reached] = {}
    rings = 0
    while rings < params.max_depth and any(frontier.values()):
        rings += 1
        for seed in seeds:
            grown: list[int] = []
            for node in frontier[seed]:
                for hyperedge in hypergraph.hyperedges_of(node).tolist():
                    if hyperedge in crossed[seed]:
                        continue
                    crossed[seed].add(hyperedge)
                    members = hypergraph.members_of(hyperedge).tolist()
                    others = [m for m in members if m != node]
                    entry = found.get(hyperedge)
                    if entry is None:  # first crossing: its chain is the one kept
                        shown = next(
                            (o for o in others if o in seed_set), others[0] if others else node
                        )
                        entry = found[hyperedge] = _Reached(rings, seed, node, shown)
                    if hypergraph.kinds[hyperedge] == FACT:
                        entry.primary = entry.primary or any(
                            _in_another_circle(reached_by.get(o, ()), seed) for o in others
                        )
                    else:
                        k = sum(m in seed_set for m in members) - int(seed in members)
                        entry.k = max(entry.k, k)
                    for other in others:
                        circles = reached_by.setdefault(other, set())
                        if seed not in circles:
                            circles.add(seed)
                            parent[(seed, other)] = (node, hyperedge)
                            grown.append(other)
            frontier[seed] = grown
    kept = _select(
        hypergraph, found, similarity, params, strict=params.strict_filter and len(seeds) > 1
    )
    traversal = Traversal(visited=set(reached_by))
    for hyperedge in kept:
        e = found[hyperedge]
        chain = (*_ring_path(parent, e.seed, e.node), Step(hyperedge, e.node, e.shown))
        traversal.retrieve(ALGORITHM, hyperedge, chain)
    meeting = sorted(n for n, circles in reached_by.items() if len(circles) > 1)
    traversal.details[ALGORITHM] = {
        **asdict(params),
        "rings": rings,
        "crossed": len(found),
        "kept": len(kept),
        "primary": sum(1 for e in kept if found[e].primary),
        "circles_meet_at": [node_name(n) for n in meeting],
    }
    return traversal


def _ring_path(
    parent: dict[tuple[int, int], tuple[int, int]], seed: int, node: int
) -> tuple[Step, ...]:
    """The steps by which `seed`'s circle reached `node` (empty for the seed itself)."""
    steps = []
    while node != seed:
        previous, hyperedge = parent[(seed, node)]
        steps.append(Step(hyperedge, previous, node))
        node = previous
    return tuple(reversed(steps))


def _in_another_circle(circles: set[int] | tuple[()], seed: int) -> bool:
    """Whether a node already reached by `circles` lies in the circle of a seed other than
    `seed`."""
    return len(circles) > 1 or (len(circles) == 1 and seed not in circles)


def _select(
    hypergraph: Hypergraph,
    found: dict[int, _Reached],
    similarity: np.ndarray,
    params: WaterCirclesParams,
    strict: bool,
) -> list[int]:
    """The hyperedges WaterCircles returns: N1 primary and N2 secondary facts, the top
    `hyper_num` theses and `episodic_num` episodes by k."""

    def by_ring(e: int) -> tuple[int, float, int]:
        return found[e].ring, -float(similarity[e]), e

    def by_k(e: int) -> tuple[int, int, float, int]:
        return -found[e].k, *by_ring(e)

    kinds = hypergraph.kinds
    facts = [e for e in found if kinds[e] == FACT]
    primary = sorted((e for e in facts if found[e].primary), key=by_ring)
    secondary = sorted((e for e in facts if not found[e].primary), key=by_ring)
    fragments = {
        kind: sorted(
            (e for e in found if kinds[e] == kind and not (strict and found[e].k == 0)), key=by_k
        )
        for kind in (THESIS, EPISODE)
    }
    return [
        *primary[: params.chain_triplets_num],
        *secondary[: params.other_triplets_num],
        *fragments[THESIS][: params.hyper_num],
        *fragments[EPISODE][: params.episodic_num],
    ]
