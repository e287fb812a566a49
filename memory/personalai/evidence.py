"""From the question to PersonalAI's linked nodes, and from retrieved hyperedges to ranked
segments: the paper's Knowledge Comparator and Triplets Filter, without an LLM.

Paper (§3): an LLM parses the question's key entities, which are aligned to graph nodes
by similarity (Knowledge Comparator); after traversal, the candidate triplets are ranked by
embedding similarity to the question and the top N kept (Triplets Filter, N not given).

Choices:
- Linked nodes: the entities of `memory.linking.query_entities` (named in the question,
  description-similar, ends of the most similar facts) stand for the parsed entities the
  question names. The parser would also return the unnamed key concept (the "city" of
  "which city…"); for it, the `aligned_entities` (2) other entities whose vectors are
  closest to the whole question are linked too, weighted by their cosine (over every
  entity, or over the nearest lists of the snapshot's IVF index of the entity vectors
  where it has one: `memory.nearest`, option `vector_probes`).
- Triplets Filter: every retrieved hyperedge is scored by the cosine of its text vector to
  the question (facts: the stored statement vector; theses: the thesis text; episodes: the
  segment vector), and the top `top_n` = 30 are kept.
- Segments from hyperedges: an episode gives its own segment, a thesis the segments
  supporting it; a segment scores the best score of the kept hyperedges giving it, ties
  broken by the segment's own cosine to the question. Each segment lists the chains of
  those hyperedges, linearized (`[s] -[p]-> [o]` for a fact, as `MemoryGraph.linearized`
  does; `[u] -[thesis: …]- [v]` and `[u] -[episode: id]- [v]` for the other steps).
"""

from __future__ import annotations

import numpy as np

from memory.linking import positions, query_entities, similar_entity_positions
from memory.nearest import probes_of
from memory.personalai.hypergraph import FACT, THESIS, EdgeSimilarity, PersonalGraph
from memory.personalai.traversal import Step, Traversal
from memory.snapshot_view import QueryContext, SnapshotView

TOP_N = 30
ALIGNED_ENTITIES = 2


def linked_nodes(
    view: SnapshotView,
    query: QueryContext,
    personal: PersonalGraph,
    question: np.ndarray,
    aligned: int = ALIGNED_ENTITIES,
) -> dict[int, float]:
    """Node positions linked to the question with their weights, best first."""
    linked = positions(personal.graph, query_entities(view, query))
    if aligned > 0:
        nearest = similar_entity_positions(
            view, question, len(linked) + aligned, probes_of(query.options)
        )
        extra = [node for node in nearest if node not in linked]
        for node in extra[:aligned]:
            linked[node] = nearest[node]
    return dict(sorted(linked.items(), key=lambda item: (-item[1], item[0])))


def filtered(
    traversal: Traversal, similarity: np.ndarray | EdgeSimilarity, top_n: int = TOP_N
) -> list[int]:
    """The Triplets Filter: retrieved hyperedges by similarity to the question (ties to
    the smaller index), top N."""
    retrieved = np.fromiter(traversal.chains, np.int64, len(traversal.chains))
    closeness = -similarity[retrieved].astype(np.float64)
    return retrieved[np.lexsort((retrieved, closeness))][:top_n].tolist()


def ranked_segments(
    personal: PersonalGraph,
    traversal: Traversal,
    kept: list[int],
    similarity: np.ndarray | EdgeSimilarity,
    question: np.ndarray,
    k: int,
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """Up to k (segment id, score) best first, and the paths that led to each."""
    best: dict[int, float] = {}
    paths: dict[int, list[str]] = {}
    for hyperedge in kept:
        text = render(personal, traversal.chains[hyperedge])
        for segment in personal.hypergraph.segments_of(hyperedge).tolist():
            best[segment] = max(best.get(segment, -1.0), float(similarity[hyperedge]))
            if text and text not in paths.setdefault(segment, []):
                paths[segment].append(text)
    if not best:
        return [], {}
    segments = np.fromiter(best, dtype=np.int64, count=len(best))
    own = personal.segment_vectors[segments] @ question
    order = sorted(range(len(segments)), key=lambda i: (-best[int(segments[i])], -own[i]))
    ids = personal.graph.segment_ids
    top = [int(segments[i]) for i in order[:k]]
    return (
        [(ids[s], round(best[s], 6)) for s in top],
        {ids[s]: paths[s] for s in top if paths.get(s)},
    )


def render(personal: PersonalGraph, chain: tuple[Step, ...]) -> str:
    """A chain of steps linearized step by step, joined by ' ; '."""
    graph, hypergraph = personal.graph, personal.hypergraph
    parts = []
    for step in chain:
        kind, ref = int(hypergraph.kinds[step.hyperedge]), int(hypergraph.refs[step.hyperedge])
        if kind == FACT:
            parts.append(graph.linearized(ref))
            continue
        label = (
            f"thesis: {personal.theses[ref].text}"
            if kind == THESIS
            else f"episode: {graph.segment_ids[ref]}"
        )
        source, target = graph.entity_names[step.source], graph.entity_names[step.target]
        end = f" [{target}]" if step.target != step.source else ""
        parts.append(f"[{source}] -[{label}]-{end}")
    return " ; ".join(parts)
