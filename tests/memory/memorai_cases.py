"""Random MemORAI asks on a snapshot's graph, and the reference paths of a segment: the
loop over every fact of the entities it mentions (what `memorai_paths` must match)."""

from __future__ import annotations

import numpy as np

from memory.graph import MemoryGraph
from memory.memorai_paths import anchors_of, paths_through

Anchors = dict[int, list[tuple[int, ...]]]


def random_ask(
    graph: MemoryGraph, rng: np.random.Generator, scored_share: float
) -> tuple[Anchors, set[int], dict[int, float]]:
    """(anchors, seed facts, fact scores) of an ask from 3 random seed facts and entities,
    with a random `scored_share` of the facts (and every seed fact) in its subgraph."""
    n_facts, n_entities = len(graph.facts), len(graph.entity_ids)
    seed_facts = set(rng.choice(n_facts, 3, replace=False).tolist())
    seed_entities = set(rng.choice(n_entities, 3, replace=False).tolist())
    anchors = anchors_of(graph, seed_entities, seed_facts)
    some = rng.choice(n_facts, max(int(n_facts * scored_share), 1), replace=False)
    scored = np.union1d(some, list(seed_facts))  # seed facts are in every subgraph
    fact_score = dict(zip(scored.tolist(), rng.random(len(scored)).tolist(), strict=True))
    return anchors, seed_facts, fact_score


def paths_by_every_fact(
    graph: MemoryGraph,
    segment: int,
    anchors: Anchors,
    seed_facts: set[int],
    fact_score: dict[int, float],
) -> list:
    """The segment's paths (length 3) found by visiting every fact of its entities."""
    row = graph.mentions
    mentioned = sorted(set(row.indices[row.indptr[segment] : row.indptr[segment + 1]]))
    every = graph.entity_facts[mentioned].indices if mentioned else []
    return paths_through(graph, segment, every, anchors, seed_facts, fact_score, 3)
