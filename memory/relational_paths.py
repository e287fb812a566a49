"""Relational paths of GRAM's Search (Eq. 3): simple paths of at most L facts between entities.

    P_{i,k} = { v_i -r1-> v_j … -rL-> v_k  in  G_t }

Paths are sequences of facts; each step may follow a fact in either direction (the paper's
Eq. 3 is written directed, but a bridge such as "Harborview Office located in Rotterdam"
must be usable from Rotterdam as well, so traversal ignores direction while every fact is
still linearized as stored, `[s] -[p]-> [o]`). A path never visits an entity twice (no
cycles, no self-loop facts); parallel facts between the same two entities give distinct
paths.

Between two entities the search is bidirectional and bounded: simple partial paths of at
most ⌈L/2⌉ facts grow from the source and of at most ⌊L/2⌋ facts from the target, level by
level through the graph's CSR rows (`graph.edges(entity)`), and meet in the middle. A path
of n facts is joined at exactly one meeting entity, the one ⌈n/2⌉ facts from the source,
so every path is produced once. Each side stops growing after `limit` partial paths (a
hub guard; the paper has no such bound), and the deepest level is the one cut short, so
short paths are never lost to the bound before long ones.

Scoring (the paper has none): the mean cosine of the query to the path's fact statements,
clipped at 0, times the product of the facts' confidences, so a longer path must be
more relevant to beat a shorter one and a doubtful fact weakens every path through it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from memory.graph import MemoryGraph


@dataclass(frozen=True)
class RelationalPath:
    """Entities v0 … vn and the facts f1 … fn joining consecutive ones (graph positions)."""

    entities: tuple[int, ...]
    facts: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.facts)

    def reversed(self) -> RelationalPath:
        return RelationalPath(self.entities[::-1], self.facts[::-1])


@dataclass
class Search:
    """Paths found by one bounded search, and whether a side hit its partial-path limit."""

    paths: list[RelationalPath]
    truncated: bool = False


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


def reading_order(graph: MemoryGraph, path: RelationalPath) -> RelationalPath:
    """The path or its reverse, whichever follows more of its facts head to tail (ties keep
    the path as found), so its linearization reads as a chain `[a] -> [b] ; [b] -> [c]`."""
    forward = sum(
        int(graph.fact_head[f] == v) for f, v in zip(path.facts, path.entities[:-1], strict=True)
    )
    return path.reversed() if 2 * forward < len(path) else path


def path_scores(
    paths: list[RelationalPath], similarity: np.ndarray, confidence: np.ndarray
) -> np.ndarray:
    """Per path: max(mean cosine of its facts to the query, 0) x product of confidences;
    `similarity` and `confidence` are indexed by fact position."""
    scores = np.zeros(len(paths))
    for index, path in enumerate(paths):
        facts = np.fromiter(path.facts, dtype=np.int64)
        relevance = max(float(similarity[facts].mean()), 0.0)
        scores[index] = relevance * float(np.prod(confidence[facts]))
    return scores
