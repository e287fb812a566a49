"""Fact paths from MemORAI's seeds to a ranked segment, for the strategy's explanation.

A path starts at an anchor: a seed entity (empty prefix) or an end of a seed fact (prefix:
that fact). It reaches segment s with one more fact f of the query subgraph that touches
the anchor, when s supports f or mentions f's other end; a seed fact reaches s on its own
when s supports it or mentions one of its ends. So paths are at most two facts long, the
radius of the one-hop subgraph. Only the segment's own facts and those of the entities it
mentions that can end a path (`_leading_facts`) are looked at, never the whole graph.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from memory.csr import ranges, row_entries
from memory.graph import MemoryGraph


def anchors_of(
    graph: MemoryGraph, seed_entities: set[int], seed_facts: set[int]
) -> dict[int, list[tuple[int, ...]]]:
    """Anchor entity -> the fact prefixes that lead from a seed to it."""
    anchors: dict[int, list[tuple[int, ...]]] = {e: [()] for e in seed_entities}
    for fact in sorted(seed_facts):
        for end in (int(graph.fact_head[fact]), int(graph.fact_tail[fact])):
            if end not in seed_entities:  # a seed entity is reached by no detour
                anchors.setdefault(end, []).append((fact,))
    return anchors


def segment_paths(
    graph: MemoryGraph,
    segment: int,
    anchors: Mapping[int, list[tuple[int, ...]]],
    seed_facts: set[int],
    fact_score: Mapping[int, float],
    limit: int,
) -> list[tuple[int, ...]]:
    """Up to `limit` fact paths from a seed to `segment`: first those whose last fact the
    segment supports, then by the mean DW-PR score of their facts (`fact_score`: the
    subgraph's facts; others are not traversed)."""
    return segments_paths(graph, [segment], anchors, seed_facts, fact_score, limit)[0]


def segments_paths(
    graph: MemoryGraph,
    segments: list[int],
    anchors: Mapping[int, list[tuple[int, ...]]],
    seed_facts: set[int],
    fact_score: Mapping[int, float],
    limit: int,
) -> list[list[tuple[int, ...]]]:
    """`segment_paths` of each of `segments`, their leading facts found together
    (`_leading_facts`)."""
    leading = _leading_facts(graph, np.asarray(segments, np.int64), anchors)
    return [
        paths_through(graph, segment, facts, anchors, seed_facts, fact_score, limit)
        for segment, facts in zip(segments, leading, strict=True)
    ]


def paths_through(
    graph: MemoryGraph,
    segment: int,
    facts: np.ndarray,
    anchors: Mapping[int, list[tuple[int, ...]]],
    seed_facts: set[int],
    fact_score: Mapping[int, float],
    limit: int,
) -> list[tuple[int, ...]]:
    """`segment_paths` visiting the segment's own facts and `facts` (of the entities it
    mentions): those that end no path may be left out (`_leading_facts`) or not."""
    supported = {f for f in graph.facts_of_segment(segment) if f in fact_score}
    row = graph.mentions
    mentioned = set(row.indices[row.indptr[segment] : row.indptr[segment + 1]].tolist())
    touching = set(supported) | {f for f in np.asarray(facts).tolist() if f in fact_score}
    paths: set[tuple[int, ...]] = set()
    for fact in touching:
        ends = (int(graph.fact_head[fact]), int(graph.fact_tail[fact]))
        if fact in seed_facts and (fact in supported or mentioned.intersection(ends)):
            paths.add((fact,))
        for anchor, other in (ends, ends[::-1]):
            if fact in supported or other in mentioned:
                for prefix in anchors.get(anchor, []):
                    paths.add(prefix if fact in prefix else (*prefix, fact))

    def rank(path: tuple[int, ...]) -> tuple[bool, float, int, tuple[int, ...]]:
        mean = sum(fact_score[f] for f in path) / len(path)
        return (path[-1] not in supported, -mean, len(path), path)

    return sorted(paths, key=rank)[:limit]


def _leading_facts(
    graph: MemoryGraph, segments: np.ndarray, anchors: Mapping[int, list[tuple[int, ...]]]
) -> list[np.ndarray]:
    """Per segment, the facts of the entities it mentions (ascending, distinct) that can
    end a path into it without being supported by it: those from an anchor to an entity
    it mentions (a seed fact is one: both its ends are anchors). The others add no path,
    so `segment_paths` never visits them.

    Found from the anchors' side, for all the segments at once: the anchors' facts
    (a fact is in the rows of both its ends in `entity_facts`) give each fact's other end,
    and each entity a segment mentions picks the facts that reach it. At 100k facts a
    query's ~10 anchors hold ~100-1,300 facts where its ~10 segments' mentioned entities
    hold ~1,000-5,700 (hubs' rows: at 1M facts a loop over each took ~15 ms); read from the
    CSR arrays (`memory.csr`)."""
    if not len(segments):
        return []
    n_facts = len(graph.fact_head)
    starts = np.fromiter(anchors, np.int64, len(anchors))
    facts = np.unique(row_entries(graph.entity_facts, starts)[0]).astype(np.int64)
    head, tail = graph.fact_head[facts], graph.fact_tail[facts]
    anchor = np.zeros(graph.n_entities, bool)
    anchor[starts] = True
    from_head, from_tail = anchor[head], anchor[tail]
    ends = np.concatenate([tail[from_head], head[from_tail]])  # the end an anchor reaches
    reaching = np.concatenate([facts[from_head], facts[from_tail]])
    order = np.argsort(ends, kind="stable")
    ends, reaching = ends[order], reaching[order]
    entities, _, counts = row_entries(graph.mentions, segments)
    owner = np.repeat(np.arange(len(segments), dtype=np.int64), counts)
    low = np.searchsorted(ends, entities, "left")
    high = np.searchsorted(ends, entities, "right")
    found = reaching[ranges(low, high - low)]
    pairs = np.unique(np.repeat(owner, high - low) * n_facts + found)  # (segment, fact)
    owner, found = pairs // n_facts, pairs % n_facts
    bounds = np.searchsorted(owner, np.arange(len(segments) + 1))
    return [found[bounds[i] : bounds[i + 1]] for i in range(len(segments))]
