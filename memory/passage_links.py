"""Untyped links through the passage graph's nodes: the LLM-free stand-ins for the relations
that REAL's and GRAM's LLMs would extract, walked beside the typed facts.

The passage graph (`memory.passage_graph`) links every segment to the nodes it names:
entities, document topic/title nodes, phrase nodes, sessions, speakers, days. Two nodes
named by one segment are joined by a `mentioned_with` relation whose evidence is that
segment; an entity and the topic node of a passage that names it are the bridge of a
two-hop question (a passage naming another passage's title links to that title's node);
a node of one turn and a node of the next turn of the same session are joined by a
`next_turn` relation whose evidence is both turns.

The links are not materialised node by node (a segment naming 20 nodes would make 190
pairs): they are read through the segment x node incidence, `node -> segment -> node`.

Hubs: a node linked to more than `HUB_SEGMENTS` segments (a speaker, a frequent phrase,
an entity named everywhere) joins no link: its specificity (1 / its segments) makes it a
weak bridge in the walk, and a path through it would fan out over hundreds of segments.
Its typed facts still count.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from memory.csr import row_entries
from memory.flat_prior import FlatPrior
from memory.linking import phrase_keys
from memory.snapshot_view import SnapshotView
from transforms.consolidation import normalize_name
from transforms.graph_nodes import MAX_TITLE_WORDS

HUB_SEGMENTS = 50
"""Nodes linked to more segments are no link end (option-free: a bound on fan-out)."""
PHRASE_PREFIX = "phrase:"
TOPIC_PREFIX = "topic:"
_WORD = re.compile(r"[\w'’-]+")
"""Words as `transforms.graph_nodes` reads titles in text."""


@dataclass(frozen=True)
class PassageLinks:
    """The segment x node incidence of a snapshot with what link searches read of it."""

    node_ids: list[str]
    node_position: dict[str, int]
    segment_nodes: sp.csr_matrix
    """n_segments x n_nodes: 1 where the segment names the node."""
    node_segments: sp.csr_matrix
    """n_nodes x n_segments (the transpose, as CSR rows)."""
    counts: np.ndarray
    """Per node, the number of segments naming it."""
    entity_node: np.ndarray
    """Node position of each entity position (-1: named by no segment)."""
    node_entity: np.ndarray
    """Entity position of each node (-1: a structural or phrase node)."""
    next_segment: np.ndarray
    """Per segment, its next turn (-1: none)."""
    previous_segment: np.ndarray
    """Per segment, its previous turn (-1: none)."""
    segment_vectors: np.ndarray
    """Per segment, its stored vector (n_segments x 0 where the index has none)."""

    @property
    def n_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def n_segments(self) -> int:
        return self.segment_nodes.shape[0]

    @functools.cached_property
    def specificity(self) -> np.ndarray:
        """Per node, 1 / the number of segments naming it (HippoRAG's node specificity)."""
        return 1.0 / np.maximum(self.counts, 1)

    @functools.cached_property
    def segment_norms(self) -> np.ndarray:
        """Per segment, its vector's length as a column (float32, `np.linalg.norm` of each
        row: the same value as of the row gathered alone), read once per view."""
        rows = np.asarray(self.segment_vectors, np.float32)
        return np.linalg.norm(rows, axis=1, keepdims=True)

    @functools.cached_property
    def linkable(self) -> np.ndarray:
        """Per node, whether it may end a link: named by 1 … `HUB_SEGMENTS` segments."""
        return (self.counts >= 1) & (self.counts <= HUB_SEGMENTS)

    def segments_of(self, node: int) -> np.ndarray:
        row = self.node_segments
        return np.asarray(row.indices[row.indptr[node] : row.indptr[node + 1]], np.int64)

    def similarity(self, segments: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
        """Cosine of the query to each segment's vector (0 where the index has none)."""
        segments = np.asarray(segments, np.int64)
        if not self.segment_vectors.shape[1] or not len(segments):
            return np.zeros(len(segments))
        rows = np.asarray(self.segment_vectors[segments], np.float64)
        norms = np.linalg.norm(rows, axis=1) * float(np.linalg.norm(query_vector))
        dots = rows @ np.asarray(query_vector, np.float64)
        return np.divide(dots, norms, out=np.zeros(len(segments)), where=norms > 0)

    def name(self, node: int, entity_names: list[str]) -> str:
        """A node's display name: the entity's name, else its id."""
        entity = int(self.node_entity[node])
        return entity_names[entity] if entity >= 0 else self.node_ids[node]


def passage_links(view: SnapshotView) -> PassageLinks:
    """The view's passage links, built once per view from its graph index (vectorised)."""
    if "passage_links" not in view.cache:
        index = view.graph_index
        names = view.node_names
        incidence = index.segment_nodes.tocsr()
        incidence.sum_duplicates()
        incidence.data[:] = 1.0
        entity_node = np.asarray(index.entity_node, np.int64)
        n_nodes = incidence.shape[1]
        node_entity = np.full(n_nodes, -1, np.int64)
        named = np.flatnonzero(entity_node >= 0)
        node_entity[entity_node[named]] = named
        following = np.asarray(index.next_segment, np.int64)
        previous = np.full(len(following), -1, np.int64)
        turns = np.flatnonzero(following >= 0)
        previous[following[turns]] = turns
        view.cache["passage_links"] = PassageLinks(
            node_ids=names.passage_nodes,
            node_position=names.passage_position,
            segment_nodes=incidence,
            node_segments=incidence.T.tocsr(),
            counts=np.diff(incidence.tocsc().indptr),
            entity_node=entity_node,
            node_entity=node_entity,
            next_segment=following,
            previous_segment=previous,
            segment_vectors=index.segment_vectors,
        )
    return view.cache["passage_links"]


def named_nodes(links: PassageLinks, text: str) -> list[int]:
    """The linkable topic/title and phrase nodes the query names (a normalised n-gram
    equal to a title's key, a phrase key), in node order: roots where the query names no
    entity."""
    words = _WORD.findall(text)
    keys = {f"{PHRASE_PREFIX}{key}" for key in phrase_keys(text)}
    for size in range(1, min(MAX_TITLE_WORDS, len(words)) + 1):
        for start in range(len(words) - size + 1):
            key = normalize_name(" ".join(words[start : start + size]))
            if key:
                keys.add(f"{TOPIC_PREFIX}{key}")
    found = [links.node_position[k] for k in keys if k in links.node_position]
    return sorted(n for n in found if links.linkable[n])


def seed_nodes(
    view: SnapshotView, links: PassageLinks, prior: FlatPrior
) -> list[tuple[int, float]]:
    """The prior's seed entities generalised to the passage graph's nodes: the linkable
    nodes (entities, topics, phrases, sessions, days) named by the flat ranking's top
    segments, weighted by the prior mass of those segments times the node's specificity
    (a node only the top segments share is the best bridge onward), heaviest first (ties
    by position)."""
    mass = prior.distribution()
    top = prior.top_segments()
    if not top:
        return []
    at = np.array([view.segment_index[s] for s in top], np.int64)
    nodes, _, counts = row_entries(links.segment_nodes, at)
    nodes = np.asarray(nodes, np.int64)
    weights = np.repeat(np.array([mass[s] for s in top]), counts)
    kept = links.linkable[nodes]
    total = np.zeros(links.n_nodes)
    np.add.at(total, nodes[kept], weights[kept])
    candidates = np.unique(nodes[kept])
    score = total[candidates] * links.specificity[candidates]
    order = np.lexsort((candidates, -score))
    return [(int(candidates[i]), float(score[i])) for i in order]
