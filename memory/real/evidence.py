"""AggregateEvidence (REAL §III-B2, unspecified beyond "globally pruned and aggregated into
a compact memory evidence subgraph") and the segments that evidence ranks.

Aggregation: the final paths of every root, each weighing S(P|q) times its root's weight
(`real_beam`: the prior mass its root carries), best first; a path whose edge set another
root's path already covers (the same facts walked from the other end) is dropped.
Segments: those supporting a path's facts (for a co-occurrence hop, the segments both
entities are mentioned in; for an untyped hop, the segments it passes through) are
credited the path's weight; then segments naming path nodes (entities, topic, phrase and
structural nodes) `MENTION_WEIGHT` × that weight × the share of the path's nodes they
name. A segment scores the sum of its credits, as a walk's visits add up (several
evidence paths through a passage make it likelier; a segment by its best credit alone:
MuSiQue dev R@5 68.3 against 72.4 summed, flat share 0.5), and lists the linearized paths
that led to it (at most `MAX_PATHS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from memory.graph import MemoryGraph
from memory.passage_links import PassageLinks
from memory.real.paths import Hop, Path, Scores, best_first, path_score

MENTION_WEIGHT = 0.5
MAX_PATHS = 3


@dataclass(frozen=True)
class Evidence:
    path: Path
    scores: Scores
    score: float


def aggregate(
    final: dict[Path, Scores], root_weight: Callable[[int], float] | None = None
) -> list[Evidence]:
    """The evidence paths, best first by S(P|q) x `root_weight(root)` (1 without it), one
    per distinct edge set."""

    def weight(path: Path, scores: Scores) -> float:
        score = path_score(path, scores)
        return score * root_weight(path.root) if root_weight is not None else score

    ranked = best_first(
        [(p, s, weight(p, s)) for p, s in final.items()], itemgetter(2), lambda x: x[0].text
    )
    seen: set[frozenset[tuple[int | None, int, int, tuple[int, ...]]]] = set()
    evidence = []
    for path, scores, score in ranked:
        edges = frozenset(_edge_key(hop) for hop in path.hops)
        if edges in seen:
            continue
        seen.add(edges)
        evidence.append(Evidence(path, scores, score))
    return evidence


def _edge_key(hop: Hop) -> tuple[int | None, int, int, tuple[int, ...]]:
    low, high = sorted((hop.source, hop.target))
    return hop.fact, low, high, hop.segments


def supporting_segments(graph: MemoryGraph, hop: Hop) -> list[int]:
    if hop.segments:
        return list(hop.segments)
    if hop.fact is not None:
        return graph.segments_of_fact(hop.fact)
    return sorted(
        set(graph.segments_of_entity(hop.source)) & set(graph.segments_of_entity(hop.target))
    )


def node_segments(graph: MemoryGraph, links: PassageLinks | None, node: int) -> np.ndarray:
    """The segments naming a beam node: an entity's mentions, else its passage node's
    segments (`memory.real.links`)."""
    n = graph.n_entities
    if node >= n:
        return links.segments_of(node - n) if links is not None else np.zeros(0, np.int64)
    mentioned = graph.entity_segments
    return np.asarray(mentioned.indices[mentioned.indptr[node] : mentioned.indptr[node + 1]])


def graph_segments(graph: MemoryGraph, links: PassageLinks | None, found: np.ndarray) -> int:
    """A bound on the segment positions: the graph's segments, or more where `found`
    (segment positions) reaches beyond them."""
    width = len(graph.segment_ids)
    if links is not None:
        width = max(width, links.n_segments)
    return max(width, int(found.max()) + 1) if len(found) else width


def rank_segments(
    graph: MemoryGraph, evidence: list[Evidence], k: int, links: PassageLinks | None = None
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """Top-k (segment id, score) from the evidence, and the paths behind each segment.

    The credits (segment, score, path) come in a fixed order: every path's supporting
    segments, then every path's mentioning segments. A segment scores their sum and
    lists the first `MAX_PATHS` distinct path texts of its credits, in that order. Scores
    are taken over all credits as arrays (a hub entity is mentioned by thousands of
    segments); the texts are replayed for the k segments returned only."""
    segments: list[int] = []
    supported: list[int] = []  # per path, how many supporting credits it has
    for item in evidence:
        before = len(segments)
        for hop in item.path.hops:
            segments += supporting_segments(graph, hop)
        supported.append(len(segments) - before)
    scores = np.array([item.score for item in evidence], np.float64)
    # every path's mentioning segments with their counts, path by path in segment order
    # (each path's `np.unique(..., return_counts=True)`), from one sort of all of them
    naming: dict[int, np.ndarray] = {}
    arrays, owners, shares = [], [], []
    for i, item in enumerate(evidence):
        entities = set(item.path.entities)
        shares.append(len(entities))
        for e in entities:
            known = naming.get(e)
            if known is None:
                known = naming[e] = np.asarray(node_segments(graph, links, e), np.int64)
            arrays.append(known)
            owners.append(i)
    mentions = np.zeros(0, np.int64)
    if arrays:
        mentions = np.concatenate(arrays)
    if not segments and not len(mentions):
        return [], {}
    width = graph_segments(graph, links, mentions)
    owner = np.repeat(owners, [len(a) for a in arrays])
    keys, count = np.unique(owner * width + mentions, return_counts=True)
    path_of = keys // width
    weight = np.array([MENTION_WEIGHT * item.score for item in evidence])[path_of]
    segment = np.concatenate([np.array(segments, np.int64), keys - path_of * width])
    value = np.concatenate(
        [np.repeat(scores, supported), weight * count / np.array(shares)[path_of]]
    )
    item_of = np.concatenate([np.repeat(np.arange(len(evidence)), supported), path_of])
    distinct, inverse = np.unique(segment, return_inverse=True)
    # the credits added in order, one at a time (as `np.add.at` adds them)
    best = np.bincount(inverse, weights=value, minlength=len(distinct))
    top = np.lexsort((distinct, -best))[:k]
    chosen, totals = distinct[top].tolist(), best[top].tolist()
    texts: dict[int, list[str]] = {s: [] for s in chosen}
    on_top = np.zeros(len(distinct), bool)
    on_top[top] = True
    credited = np.flatnonzero(on_top[inverse])
    path_texts: dict[int, str] = {}  # per evidence item credited, its path's text
    for at, item in zip(segment[credited].tolist(), item_of[credited].tolist(), strict=True):
        listed = texts[at]
        if len(listed) < MAX_PATHS:
            text = path_texts.get(item)
            if text is None:
                text = path_texts[item] = evidence[item].path.text
            if text not in listed:
                listed.append(text)
    scored = [
        (graph.segment_ids[s], round(total, 6)) for s, total in zip(chosen, totals, strict=True)
    ]
    return scored, {graph.segment_ids[s]: listed for s, listed in texts.items()}
