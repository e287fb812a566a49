"""Test oracle: REAL's expansion and counterfactual repair as they were before an entity's
edges were read once a query and filtered and ranked as arrays (a hop object per edge,
its filters read per visit), kept verbatim so the differential test can check that
`SearchSpace.expand` and `Repairer.__call__` return identical paths, with the untyped
links of the passage graph read segment by segment and node by node (`link_hops`); and the segment
ranking as it was before its credits were taken as arrays (`rank_segments`). Not product
code."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from memory.graph import MemoryGraph
from memory.passage_links import HUB_SEGMENTS, PassageLinks
from memory.real.evaluator import DISJOINT_TIME, TYPE_MISMATCH, overlaps
from memory.real.evidence import MAX_PATHS, MENTION_WEIGHT, Evidence, supporting_segments
from memory.real.links import PER_SEGMENT
from memory.real.paths import Hop, Path, Scores
from memory.real.repair import CO_OCCURRENCE, Repairer, template_for
from memory.real.space import SearchSpace


def top_m(space: SearchSpace, path: Path, hops: list[Hop]) -> list[Path]:
    if not hops:
        return []
    similarity = np.stack([hop.vector for hop in hops]) @ space.query_vector
    order = np.argsort(-similarity, kind="stable")[: space.m]
    return [path.extend(hops[i]) for i in order]


def expand(space: SearchSpace, path: Path) -> list[Path]:
    hops = []
    if path.end < space.graph.n_entities:
        hops = [
            space.fact_hop(path, edge)
            for edge in space.open_edges(path)
            if not space.failed_filters(edge.fact, path.intent)
        ]
    return top_m(space, path, hops + link_hops(space, path))


def link_hops(space: SearchSpace, path: Path) -> list[Hop]:
    """The untyped hops of the path's end (`memory.real.links`), segment by segment and
    node by node: the end node's segments (a hub's only where `focus` holds) off the path,
    then their next turns, then their previous turns, each reached segment off the path;
    per reached segment the `PER_SEGMENT` linkable nodes off the path that bridge furthest
    (two or more segments, the fewest first, then by position); per target node its most
    similar segment (the first of equals)."""
    links = space.links
    if links is None:
        return []
    n = space.graph.n_entities
    node = int(links.entity_node[path.end]) if path.end < n else path.end - n
    if node < 0:
        return []
    on_path = {int(links.entity_node[e]) if e < n else e - n for e in path.entities}
    used = {s for hop in path.hops for s in hop.segments}
    counts = np.asarray(links.segment_nodes.sum(axis=0)).ravel().astype(int)
    own = [s for s in range(links.segment_nodes.shape[0]) if links.segment_nodes[s, node]]
    if counts[node] > HUB_SEGMENTS:
        own = [s for s in own if space.focus is not None and space.focus[s]]
    own = [s for s in own if s not in used]
    pairs = [(s, s) for s in own]
    pairs += [(s, int(links.next_segment[s])) for s in own if links.next_segment[s] >= 0]
    pairs += [(s, int(links.previous_segment[s])) for s in own if links.previous_segment[s] >= 0]
    rows = []
    for via, reached in pairs:
        if reached in used:
            continue
        named = links.segment_nodes[reached].indices.tolist()
        named = [v for v in named if 1 <= counts[v] <= HUB_SEGMENTS and v not in on_path]
        named.sort(key=lambda v: (counts[v] < 2, counts[v], v))
        rows += [(via, reached, v) for v in named[:PER_SEGMENT]]
    units = [
        _unit(links.segment_vectors[reached])
        if via == reached
        else _unit(_unit(links.segment_vectors[reached]) + _unit(links.segment_vectors[via]))
        for via, reached, _ in rows
    ]
    query = np.asarray(space.query_vector, np.float32)
    similarity = (np.stack(units) @ query).tolist() if units else []
    best: dict[int, tuple[float, int]] = {}
    for i, (_, _, v) in enumerate(rows):
        if v not in best or similarity[i] > best[v][0]:
            best[v] = (similarity[i], i)
    hops = []
    for i in sorted(i for _, i in best.values()):
        via, reached, v = rows[i]
        entity = int(links.node_entity[v])
        target = entity if entity >= 0 else n + v
        target_name = space.graph.entity_names[target] if target < n else links.node_ids[v]
        relation = "mentioned_with" if via == reached else "next_turn"
        weight = float(np.sqrt((1.0 / counts[node]) * (1.0 / counts[v])))
        hops.append(
            Hop(
                fact=None,
                source=path.end,
                target=target,
                relation=relation,
                target_name=target_name,
                text=f"[{space.node_name(path.end)}] -[{relation}]-> [{target_name}]",
                confidence=weight,
                target_type=space.entity_types[target] if target < n else None,
                vector=units[i],
                segments=(via,) if via == reached else (via, reached),
            )
        )
    return hops


def repair(repairer: Repairer, path: Path) -> list[Path]:
    hops = _rule_hops(repairer, path)
    if CO_OCCURRENCE in repairer.templates:
        hops += _co_occurrence_hops(repairer, path)
    return top_m(repairer.space, path, hops)


def _rule_hops(repairer: Repairer, path: Path) -> list[Hop]:
    space = repairer.space
    graph, hops = space.graph, []
    if path.end >= graph.n_entities:  # a topic, phrase or structural node: no facts
        return []
    for edge in space.open_edges(path):
        failed = space.failed_filters(edge.fact, path.intent)
        relation = graph.facts[edge.fact]["relation"]
        template = template_for(failed, relation, space.label(edge.fact))
        if template in repairer.templates:
            hops.append(space.fact_hop(path, edge, repair=template))
    return hops


def _co_occurrence_hops(repairer: Repairer, path: Path) -> list[Hop]:
    space = repairer.space
    graph = space.graph
    source = path.end
    if source >= graph.n_entities:
        return []
    shared = (graph.entity_segments[source] @ graph.mentions).tocsr()
    linked = {edge.other for edge in graph.edges(source)}
    hops = []
    for target in shared.indices.tolist():
        if target == source or target in linked or path.visits(target):
            continue
        vector = space.entity_vectors[target] if len(space.entity_vectors) else None
        if vector is None or not np.any(vector):
            continue
        hops.append(repairer.co_occurrence_hop(path, target))  # the hop itself, not the loop
    return hops


def _unit(vector: np.ndarray) -> np.ndarray:
    row = np.asarray(vector, np.float32)[None, :]
    return (row / np.linalg.norm(row, axis=1, keepdims=True))[0]


def rank_segments(
    graph: MemoryGraph, evidence: list[Evidence], k: int, links: PassageLinks | None = None
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """Top-k (segment id, score) from the evidence, and the paths behind each segment."""
    scores: dict[int, float] = {}
    paths: dict[int, list[str]] = {}

    def credit(segment: int, score: float, path: Path) -> None:
        scores[segment] = scores.get(segment, 0.0) + score
        texts = paths.setdefault(segment, [])
        if path.text not in texts and len(texts) < MAX_PATHS:
            texts.append(path.text)

    for item in evidence:
        for hop in item.path.hops:
            for segment in supporting_segments(graph, hop):
                credit(segment, item.score, item.path)
    for item in evidence:
        entities = set(item.path.entities)
        mentioned = Counter(s for e in entities for s in _named_by(graph, links, e))
        for segment, count in mentioned.items():
            credit(segment, MENTION_WEIGHT * item.score * count / len(entities), item.path)
    top = sorted(scores, key=lambda s: (-scores[s], s))[:k]
    scored = [(graph.segment_ids[s], round(scores[s], 6)) for s in top]
    return scored, {graph.segment_ids[s]: paths[s] for s in top}


def _named_by(graph: MemoryGraph, links: PassageLinks | None, node: int) -> list[int]:
    if node < graph.n_entities:
        return graph.segments_of_entity(node)
    column = links.segment_nodes[:, node - graph.n_entities]
    return sorted(column.nonzero()[0].tolist())


def embedding_scores(query_vector: np.ndarray, expected_type: str | None, path: Path) -> Scores:
    """`EmbeddingEvaluator.score_one` as it was before its centroid and links were taken
    without `np.mean`, `np.linalg.norm` and `np.clip`."""
    if not path.hops:
        return Scores(0.0, 1.0, 0.0)
    vectors = [hop.vector for hop in path.hops if hop.vector is not None]
    relevance = 0.0
    if vectors:
        centroid = np.mean(vectors, axis=0)
        norm = float(np.linalg.norm(centroid))
        if norm > 0:
            relevance = max(0.0, min(1.0, float(centroid @ query_vector) / norm))
    fits = expected_type is None or path.hops[-1].target_type == expected_type
    links = [1.0]
    for a, b in itertools.pairwise(path.hops):
        link = 1.0
        if a.vector is not None and b.vector is not None:
            link = (1.0 + float(np.clip(a.vector @ b.vector, -1.0, 1.0))) / 2.0
        if not overlaps(a, b):
            link *= DISJOINT_TIME
        links.append(link)
    return Scores(relevance, min(links), relevance * (1.0 if fits else TYPE_MISMATCH))
