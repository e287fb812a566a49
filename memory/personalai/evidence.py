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
  supporting it, a fact its source segments. Each is scored by WaterCircles' fragment
  count k, the linked nodes among its episode's members (`counted`), ties by the
  segment's cosine to the question. On documents (the strategy's `WALKED_KINDS`), the
  episodes of every node the traversal visited that carries prior mass are fragments it
  reached too, and every node counts with the prior mass it carries (`walked`: a
  two-step walk from the prior's top passages through the nodes the traversal reached,
  log of the mass).
  MuSiQue dev (all 100 questions) R@5, WaterCircles: plain k 69.2 (flat share 0.3);
  linked nodes weighted by specificity 68.2 (log 68.9); k weighted by prior mass over the
  retrieved hyperedges' segments alone 67.0 (log 67.6; with `wc_episodic_num` 40, log,
  flat share 0.1: 70.9); with the visited nodes' episodes too, log, 70.9 / 74.3 / 74.5 /
  72.4 at flat share 0 / 0.1 / 0.2 / 0.3. LoCoMo dev (first 300 questions) turn R@10 at
  flat share 0.5, plain k against this: WaterCircles 71.6 / 72.5, beam 71.7 / 71.6.
  Scoring by the Triplets
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
COUNT_TIE_BREAK = 1e-3
MASS_TIE_BREAK = 1e-6
"""Weights of a segment's cosine to the question beside its count k and its log mass (a
cosine is in [-1, 1], so it orders segments of equal count or mass only)."""
FLOOR = 1e-6
"""Added to a fragment's walked mass (scaled to at most ~1) before its log: a fragment
no weighted node reaches scores log(FLOOR), below every one some node reaches."""
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


def prior_node_mass(
    view: SnapshotView,
    personal: PersonalGraph,
    prior: FlatPrior,
    count: int = SEED_SEGMENTS,
) -> tuple[np.ndarray, np.ndarray]:
    """(nodes ascending, mass): each node of the episodes of the top `count` segments of
    flat search, with the prior mass those segments send it, their prior mass times its
    specificity summed (a walk's first step from the prior's passages: a passage passes
    more of its mass to a node it shares with few others)."""
    weights = prior.distribution()
    top = prior.top_segments(count)
    segments = np.asarray([view.segment_index[s] for s in top], np.int64)
    if not len(segments):
        return np.zeros(0, np.int64), np.zeros(0)
    row, col = row_entries(personal.hypergraph.members, personal.first_episode + segments)
    mass = np.asarray([weights[s] for s in top])[row]
    mass = mass * personal.node_specificity[col]
    nodes, inverse = np.unique(col, return_inverse=True)
    return nodes, np.bincount(inverse, weights=mass, minlength=len(nodes))


def prior_nodes(
    node_mass: tuple[np.ndarray, np.ndarray], limit: int = PRIOR_NODES
) -> dict[int, float]:
    """The nodes of the episodes flat search ranks first (`prior_node_mass`), the `limit`
    heaviest, their weights scaled to a maximum of 1."""
    nodes, mass = node_mass
    if not len(nodes):
        return {}
    best = np.lexsort((nodes, -mass))[:limit]
    return {int(nodes[i]): float(mass[i] / mass[best[0]]) for i in best}


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
    node_mass: tuple[np.ndarray, np.ndarray] | None,
    question: np.ndarray,
) -> tuple[list[tuple[str, float]], dict[str, list[str]]]:
    """The fragments the traversal reached, best first, scored by WaterCircles' fragment
    count k (`counted`, `node_mass` None) or by k with each node weighted by the prior
    mass it carries (`walked`); and for the segments of the Triplets Filter's `kept`
    hyperedges, the paths that led to them."""
    retrieved = np.asarray(list(traversal.chains), np.int64)
    _, segments = row_entries(personal.hypergraph.supports, retrieved)
    segments = np.unique(segments)
    if node_mass is not None:
        segments, score = walked(personal, traversal, linked, node_mass, segments, question)
    if not len(segments):
        return [], {}
    if node_mass is None:
        score = counted(personal, segments, linked, question)
    order = np.argsort(-score, kind="stable")
    ids = personal.graph.segment_ids
    ranked = [
        (ids[segment], round(value, 9))
        for segment, value in zip(segments[order].tolist(), score[order].tolist(), strict=True)
    ]
    paths: dict[str, list[str]] = {}
    for hyperedge in kept:
        text = render(personal, traversal.chains[hyperedge])
        for segment in personal.hypergraph.segments_of(hyperedge).tolist():
            shown = paths.setdefault(ids[segment], [])
            if text and text not in shown:
                shown.append(text)
    return ranked, paths


def counted(
    personal: PersonalGraph, segments: np.ndarray, linked: dict[int, float], question: np.ndarray
) -> np.ndarray:
    """Each segment's count k of linked nodes among its episode's members, ties by its
    cosine to the question."""
    is_linked = np.zeros(personal.hypergraph.n_nodes)
    is_linked[list(linked)] = 1.0
    k = personal.episode_members(segments) @ is_linked
    return k + COUNT_TIE_BREAK * (personal.segment_vectors[segments] @ question)


def walked(
    personal: PersonalGraph,
    traversal: Traversal,
    linked: dict[int, float],
    node_mass: tuple[np.ndarray, np.ndarray],
    segments: np.ndarray,
    question: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(fragments ascending, scores): `segments` and every episode of a node the traversal
    visited (or linked) that carries prior mass (`node_mass`), each scored log(sum over
    its episode's members of mass(n) x specificity(n) + `FLOOR`): the mass the prior's
    passages send through the node (scaled to a maximum of 1), of which each of its
    segments gets its share (a walk's second step), ties by cosine to the question."""
    hypergraph = personal.hypergraph
    nodes, mass = node_mass
    if len(nodes):
        mass = mass / mass.max() * personal.node_specificity[nodes]
        reached = np.zeros(hypergraph.n_nodes, bool)
        reached[np.fromiter((*traversal.visited, *linked), np.int64)] = True
        kept_nodes = reached[nodes]
        nodes, mass = nodes[kept_nodes], mass[kept_nodes]
    at, edges = row_entries(hypergraph.incidence, nodes)
    first = personal.first_episode
    episode = edges >= first
    walked_to, inverse = np.unique(edges[episode] - first, return_inverse=True)
    carried = np.bincount(inverse, weights=mass[at[episode]], minlength=len(walked_to))
    segments = np.union1d(segments, walked_to)
    total = np.zeros(len(segments))
    total[np.searchsorted(segments, walked_to)] = carried
    cosine = personal.segment_vectors[segments] @ question
    return segments, np.log(total + FLOOR) + MASS_TIE_BREAK * cosine


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
