"""AggregateEvidence (REAL §III-B2, unspecified beyond "globally pruned and aggregated into
a compact memory evidence subgraph") and the segments that evidence ranks.

Aggregation: the final paths of every root, best first by S(P|q); a path whose edge set
another root's path already covers (the same facts walked from the other end) is dropped.
Segments: those supporting a path's facts (for a co-occurrence hop, the segments both
entities are mentioned in) score S(P|q); then segments mentioning path entities score
`MENTION_WEIGHT` × S(P|q) × the share of the path's entities they mention. A segment keeps
its best score and lists the linearized paths that led to it (at most `MAX_PATHS`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from memory.graph import MemoryGraph
from memory.real.paths import Hop, Path, Scores, path_score

MENTION_WEIGHT = 0.5
MAX_PATHS = 3


@dataclass(frozen=True)
class Evidence:
    path: Path
    scores: Scores
    score: float


def aggregate(final: dict[Path, Scores]) -> list[Evidence]:
    """The evidence paths, best first, one per distinct edge set."""
    ranked = sorted(final.items(), key=lambda ps: (-path_score(*ps), ps[0].text))
    seen: set[frozenset[tuple[int | None, int, int]]] = set()
    evidence = []
    for path, scores in ranked:
        edges = frozenset(_edge_key(hop) for hop in path.hops)
        if edges in seen:
            continue
        seen.add(edges)
        evidence.append(Evidence(path, scores, path_score(path, scores)))
    return evidence


def _edge_key(hop: Hop) -> tuple[int | None, int, int]:
    low, high = sorted((hop.source, hop.target))
    return hop.fact, low, high


def supporting_segments(graph: MemoryGraph, hop: Hop) -> list[int]:
    if hop.fact is not None:
        return graph.segments_of_fact(hop.fact)
    return sorted(
        set(graph.segments_of_entity(hop.source)) & set(graph.segments_of_entity(hop.target))
    )


def rank_segments(
    graph: MemoryGraph, evidence: list[Evidence], k: int
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """Top-k (segment id, score) from the evidence, and the paths behind each segment."""
    scores: dict[int, float] = {}
    paths: dict[int, list[str]] = {}

    def credit(segment: int, score: float, path: Path) -> None:
        if score > scores.get(segment, float("-inf")):
            scores[segment] = score
        texts = paths.setdefault(segment, [])
        if path.text not in texts and len(texts) < MAX_PATHS:
            texts.append(path.text)

    for item in evidence:
        for hop in item.path.hops:
            for segment in supporting_segments(graph, hop):
                credit(segment, item.score, item.path)
    for item in evidence:
        entities = set(item.path.entities)
        mentioned = Counter(s for e in entities for s in graph.segments_of_entity(e))
        for segment, count in mentioned.items():
            credit(segment, MENTION_WEIGHT * item.score * count / len(entities), item.path)
    top = sorted(scores, key=lambda s: (-scores[s], s))[:k]
    scored = [(graph.segment_ids[s], round(scores[s], 6)) for s in top]
    return scored, {graph.segment_ids[s]: paths[s] for s in top}
