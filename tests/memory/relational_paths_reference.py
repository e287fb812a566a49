"""Test oracle: GRAM's relational path search as it was before it ran on arrays (one
`RelationalPath` per partial path, grown edge by edge), kept verbatim so the
differential test can check that `memory.relational_paths` finds the same paths in the same
order, truncates alike, and gives them the same walk masses; and GRAM's link graph (facts
and the passage graph's untyped links) built edge by edge. Not product code."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from memory.graph import MemoryGraph
from memory.link_graph import FACT, MENTION, NEXT_TURN
from memory.passage_links import HUB_SEGMENTS, PassageLinks
from memory.relational_paths import RelationalPath


class Search:
    """Paths found by one bounded search, and whether a side hit its partial-path limit."""

    def __init__(self, paths: list[RelationalPath], truncated: bool = False) -> None:
        self.paths = paths
        self.truncated = truncated


def _grow(
    graph: MemoryGraph, start: int, depth: int, stop_at: int | None, avoid: int | None, limit: int
) -> Search:
    """Simple paths from `start` of 0 … `depth` facts, level by level, at most `limit`.
    A path may end at `stop_at` but not go on from it; it never enters `avoid`."""
    found = [RelationalPath((start,), ())]
    frontier = list(found)
    for _ in range(depth):
        grown: list[RelationalPath] = []
        for path in frontier:
            end = path.entities[-1]
            if end == stop_at:
                continue
            for edge in graph.edges(end):
                if edge.other in path.entities or edge.other == avoid:
                    continue
                if len(found) + len(grown) >= limit:
                    return Search(found + grown, truncated=True)
                grown.append(RelationalPath((*path.entities, edge.other), (*path.facts, edge.fact)))
        found += grown
        frontier = grown
    return Search(found)


def paths_between(
    graph: MemoryGraph, source: int, target: int, max_length: int, limit: int
) -> Search:
    """All simple paths of 1 … `max_length` facts from `source` to `target`, shortest first
    (bidirectional search; each side keeps at most `limit` partial paths)."""
    if source == target or max_length < 1:
        return Search([])
    forward = _grow(graph, source, (max_length + 1) // 2, target, None, limit)
    backward = _grow(graph, target, max_length // 2, None, source, limit)
    ending: dict[tuple[int, int], list[RelationalPath]] = defaultdict(list)
    for half in backward.paths:
        ending[(half.entities[-1], len(half))].append(half)
    by_length: dict[int, list[RelationalPath]] = defaultdict(list)
    for front in forward.paths:
        i, meet = len(front), front.entities[-1]
        for j in (i, i - 1):
            if j < 0 or i + j < 1 or i + j > max_length:
                continue
            seen = set(front.entities)
            for back in ending.get((meet, j), []):
                if seen.isdisjoint(back.entities[:-1]):
                    joined = back.reversed()
                    by_length[i + j].append(
                        RelationalPath(
                            front.entities + joined.entities[1:], front.facts + joined.facts
                        )
                    )
    paths = [p for n in sorted(by_length) for p in by_length[n]]
    return Search(paths, forward.truncated or backward.truncated)


def paths_from(graph: MemoryGraph, source: int, max_length: int, limit: int) -> Search:
    """All simple paths of 1 … `max_length` facts starting at `source`, shortest first
    (at most `limit` partial paths, the empty one included)."""
    grown = _grow(graph, source, max_length, None, None, limit)
    return Search([p for p in grown.paths if len(p)], grown.truncated)


def path_masses(
    paths: list[RelationalPath], weight: np.ndarray, degree: np.ndarray, start: float, end: float
) -> np.ndarray:
    """Per path, step by step: `start` x the product of weight[fact] / degree[entity
    left] from its first entity, plus `end` x the same product from its last."""
    masses = np.zeros(len(paths))
    for index, path in enumerate(paths):
        forward = backward = 1.0
        for fact, left, right in zip(path.facts, path.entities, path.entities[1:], strict=False):
            forward *= weight[fact] / degree[left]
            backward *= weight[fact] / degree[right]
        masses[index] = start * forward + (end * backward if end else 0.0)
    return masses


def link_graph_edges(links: PassageLinks, graph: MemoryGraph) -> list[tuple[int, int, int, int]]:
    """GRAM's link graph (`memory.link_graph`) as (first vertex, second vertex, kind, fact)
    per edge, built fact by fact, node by node and turn by turn: the facts between two
    distinct entity nodes, every non-hub node – segment mention (nodes in order, each
    node's segments ascending) and every turn – next turn (segments in order)."""
    n = len(links.node_ids)
    named_by: dict[int, list[int]] = defaultdict(list)
    for segment in range(links.segment_nodes.shape[0]):
        row = links.segment_nodes
        for node in row.indices[row.indptr[segment] : row.indptr[segment + 1]].tolist():
            named_by[node].append(segment)
    edges = []
    for fact in range(len(graph.fact_head)):
        head = int(links.entity_node[graph.fact_head[fact]])
        tail = int(links.entity_node[graph.fact_tail[fact]])
        if head >= 0 and tail >= 0 and head != tail:
            edges.append((head, tail, FACT, fact))
    for node in range(n):
        segments = sorted(set(named_by[node]))
        if 1 <= len(segments) <= HUB_SEGMENTS:
            edges += [(node, n + segment, MENTION, -1) for segment in segments]
    for segment, following in enumerate(links.next_segment.tolist()):
        if following >= 0:
            edges.append((n + segment, n + following, NEXT_TURN, -1))
    return edges
