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
  where it has one: `memory.nearest`, option `vector_probes`). Beside them, the phrase
  and topic nodes the question's n-grams equal (`phrase_nodes`, the 4 most specific, as
  `hipporag_ppr` links phrases), and the nodes of the passages flat search ranks first
  (`prior_nodes`: the 8 heaviest by prior mass x specificity over the top 10 segments).
  Measured on 200 LoCoMo dev questions (WaterCircles, turn R@10, flat share 0.5): the
  prior's entities alone (4) 66.0, the prior passages' nodes 8 / 12 / 16: 69.8 / 68.4 /
  67.0 (hybrid 66.2).
- Triplets Filter: every retrieved hyperedge is scored by the cosine of its text vector to
  the question (facts: the stored statement vector; theses: the thesis text; episodes: the
  segment vector), and the top `top_n` = 30 are kept; their paths are what a segment shows.
- Segments from hyperedges: an episode gives its own segment, a thesis the segments
  supporting it, a fact its source segments. Every segment of a retrieved hyperedge is
  scored by WaterCircles' fragment count k, the linked nodes among its episode's
  members, ties by the segment's cosine to the question. Scoring by the Triplets
  Filter's cosine instead (the best kept hyperedge's) fell below `hybrid` at every flat
  share (LoCoMo, 300 questions: WaterCircles 51.0 / 58.3 / 64.4 at 0.2 / 0.4 / 0.6,
  hybrid 65.9): it ranks by what the dense prior already ranks by, on a smaller pool.
  Each segment lists the chains of the kept hyperedges that stand on it, linearized
  (`[s] -[p]-> [o]` for a fact, as `MemoryGraph.linearized` does; `[u] -[thesis: …]- [v]`
  and `[u] -[episode: id]- [v]` for the other steps).
"""

from __future__ import annotations

import numpy as np

from memory.flat_prior import SEED_SEGMENTS, FlatPrior
from memory.linking import phrase_keys, positions, query_entities, similar_entity_positions
from memory.nearest import probes_of
from memory.passage_graph import PHRASE_PREFIX
from memory.personalai.hypergraph import (
    FACT,
    THESIS,
    EdgeSimilarity,
    PersonalGraph,
    row_entries,
)
from memory.personalai.traversal import Step, Traversal
from memory.snapshot_view import QueryContext, SnapshotView
from transforms.consolidation import normalize_name

TOPIC_PREFIX = "topic:"
TOP_N = 30
TIE_BREAK = 1e-3
"""Weight of a segment's cosine to the question beside its count k (a cosine is in
[-1, 1], so it orders segments of equal k only)."""
ALIGNED_ENTITIES = 2
QUERY_PHRASES = 4
PRIOR_NODES = 8


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


def phrase_nodes(
    personal: PersonalGraph, text: str, limit: int = QUERY_PHRASES
) -> dict[int, float]:
    """The phrase and topic nodes the question's n-grams equal (`memory.linking.phrase_keys`;
    a topic by its normalised title), those in some episode, the `limit` most specific
    (fewest segments) first, weighted by their specificity."""
    keys = phrase_keys(text)
    ids = {f"{PHRASE_PREFIX}{key}": 1.0 for key in keys}
    ids.update({f"{TOPIC_PREFIX}{normalize_name(key)}": 1.0 for key in keys})
    found = personal.passage_positions(ids)
    degree = np.diff(personal.hypergraph.incidence.indptr)
    kept = {node: float(personal.node_specificity[node]) for node in found if degree[node] > 0}
    best = sorted(kept.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return dict(best)


def prior_nodes(
    view: SnapshotView,
    personal: PersonalGraph,
    prior: FlatPrior,
    limit: int = PRIOR_NODES,
    count: int = SEED_SEGMENTS,
) -> dict[int, float]:
    """The nodes of the episodes flat search ranks first: each node of the top `count`
    segments' episodes weighted by those segments' prior mass times its specificity, the
    `limit` heaviest, their weights scaled to a maximum of 1."""
    weights = prior.distribution()
    top = prior.top_segments(count)
    segments = np.asarray([view.segment_index[s] for s in top], np.int64)
    if not len(segments):
        return {}
    members = personal.episode_members(segments).tocoo()
    mass = np.asarray([weights[s] for s in top])[members.row]
    found: dict[int, float] = {}
    for node, weight in zip(members.col.tolist(), mass.tolist(), strict=True):
        found[node] = found.get(node, 0.0) + weight * float(personal.node_specificity[node])
    best = sorted(found.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return {node: weight / best[0][1] for node, weight in best}


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
    linked: dict[int, float],
    question: np.ndarray,
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """Every segment a retrieved hyperedge stands on, scored by its count k of linked
    nodes among its episode's members (WaterCircles' fragment sort, for every
    algorithm), ties broken by the segment's cosine to the question, best first; and for
    the segments of the Triplets Filter's `kept` hyperedges, the paths that led to them."""
    hypergraph = personal.hypergraph
    retrieved = list(traversal.chains)
    if not retrieved:
        return [], {}
    _, segments = row_entries(hypergraph.supports, np.asarray(retrieved, np.int64))
    segments = np.unique(segments)
    is_linked = np.zeros(hypergraph.n_nodes)
    is_linked[list(linked)] = 1.0
    k = personal.episode_members(segments) @ is_linked
    score = k + TIE_BREAK * (personal.segment_vectors[segments] @ question)
    order = np.argsort(-score, kind="stable")
    ids = personal.graph.segment_ids
    paths: dict[str, list[str]] = {}
    for hyperedge in kept:
        text = render(personal, traversal.chains[hyperedge])
        for segment in hypergraph.segments_of(hyperedge).tolist():
            shown = paths.setdefault(ids[segment], [])
            if text and text not in shown:
                shown.append(text)
    return [(ids[int(segments[i])], round(float(score[i]), 6)) for i in order], paths


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
        source, target = personal.name(step.source), personal.name(step.target)
        end = f" [{target}]" if step.target != step.source else ""
        parts.append(f"[{source}] -[{label}]-{end}")
    return " ; ".join(parts)
