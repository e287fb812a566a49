"""GRAM's search graph on the passage links: typed facts and untyped links as one edge
list that `memory.relational_paths` searches for paths, unchanged.

Vertices: the passage graph's nodes (entities, topic/title, phrase and structural nodes;
`memory.passage_links`), then the segments (vertex n_nodes + segment position). Edges, in
this order:

- `FACT`: a typed fact between two entity nodes (the query's facts, `graph_of`);
- `MENTION`: node – segment, for every linkable node (not a hub) a segment names. Two
  such edges through one segment, node – segment – node, are the `mentioned_with`
  relation of the two nodes with that segment as its evidence; an entity – passage –
  title node pair is the two-hop bridge;
- `NEXT_TURN`: turn – next turn of the same session.

So a `mentioned_with` relation is two edges of this graph, and a path of L edges holds
up to L facts or L / 2 untyped relations. Every edge's supporting segments are its own
segment ends and, for a fact, the segments that state it.

Built once per view and fact coordinates with vectorised operations (no per-segment
loop); `tests/memory/relational_paths_reference.py` builds the same edge list segment
by segment.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from memory.graph import MemoryGraph
from memory.passage_graph import NEXT_TURN_WEIGHT, PHRASE_PREFIX, PHRASE_WEIGHT
from memory.passage_links import PassageLinks
from transforms.graph_structures import entity_fact_incidence

FACT, MENTION, NEXT_TURN = 0, 1, 2
KIND_NAMES = ("fact", "mentioned_in", "next_turn")


@dataclass(frozen=True)
class LinkGraph:
    """Edges over [nodes | segments] with what path search and scoring read of them."""

    n_nodes: int
    n_segments: int
    fact_head: np.ndarray
    """Per edge, its first vertex (for a fact, its head's node)."""
    fact_tail: np.ndarray
    """Per edge, its second vertex (a mention's segment; a next turn's later turn)."""
    kind: np.ndarray
    """Per edge: FACT, MENTION or NEXT_TURN."""
    ref: np.ndarray
    """Per edge: its fact's position in the query's graph for a fact, else -1."""
    weight: np.ndarray
    """Per edge, its weight in the passage graph's walk (`memory.passage_graph`): a
    mention the node's specificity (times `PHRASE_WEIGHT` for a phrase node), a fact its
    confidence times the lesser specificity of its ends, a next turn `NEXT_TURN_WEIGHT`."""

    @property
    def n_entities(self) -> int:
        """Vertices, under the name `memory.relational_paths` reads."""
        return self.n_nodes + self.n_segments

    @functools.cached_property
    def entity_facts(self) -> sp.csr_matrix:
        """Vertex x edge incidence, +1 at the first vertex and -1 at the second."""
        return entity_fact_incidence(self.fact_head, self.fact_tail, self.n_entities)

    def edges(self, vertex: int) -> list:
        """The edges of `vertex` as `memory.graph.Edge`s (for the reference search)."""
        return MemoryGraph.edges(self, vertex)  # type: ignore[arg-type]

    def edge_arrays(self, vertex: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return MemoryGraph.edge_arrays(self, vertex)  # type: ignore[arg-type]

    def steps(self, vertices: np.ndarray, edges: np.ndarray) -> np.ndarray:
        """The walk's transition probability of leaving each of `vertices` by the edge of
        the same position: the edge's weight over the vertex's weighted degree."""
        return self.weight[edges] / self.degree[vertices]

    @functools.cached_property
    def degree(self) -> np.ndarray:
        """Per vertex, the summed weight of its edges (1 where it has none)."""
        total = np.zeros(self.n_entities)
        np.add.at(total, self.fact_head, self.weight)
        np.add.at(total, self.fact_tail, self.weight)
        return np.where(total > 0, total, 1.0)

    def segment(self, vertex: int) -> int:
        """The segment position of a segment vertex, -1 for a node."""
        return vertex - self.n_nodes if vertex >= self.n_nodes else -1


def link_graph(links: PassageLinks, graph: MemoryGraph) -> LinkGraph:
    """The edge list of `graph`'s facts and the passage links (see the module)."""
    entity_node = links.entity_node
    head, tail = entity_node[graph.fact_head], entity_node[graph.fact_tail]
    facts = np.flatnonzero((head >= 0) & (tail >= 0) & (head != tail))
    incidence = links.segment_nodes.tocoo()
    kept = links.linkable[incidence.col]
    segment, node = incidence.row[kept].astype(np.int64), incidence.col[kept].astype(np.int64)
    order = np.lexsort((segment, node))
    segment, node = segment[order], node[order]
    turns = np.flatnonzero(links.next_segment >= 0)
    n = links.n_nodes
    heads = np.concatenate([head[facts], node, n + turns])
    tails = np.concatenate([tail[facts], n + segment, n + links.next_segment[turns]])
    kinds = np.concatenate(
        [np.full(len(facts), FACT), np.full(len(node), MENTION), np.full(len(turns), NEXT_TURN)]
    )
    refs = np.concatenate([facts, np.full(len(node) + len(turns), -1)])
    specificity = links.specificity
    phrase = np.fromiter((i.startswith(PHRASE_PREFIX) for i in links.node_ids), bool, n)[node]
    weights = np.concatenate(
        [
            graph.fact_confidence[facts]
            * np.minimum(specificity[head[facts]], specificity[tail[facts]]),
            specificity[node] * np.where(phrase, PHRASE_WEIGHT, 1.0),
            np.full(len(turns), NEXT_TURN_WEIGHT),
        ]
    )
    return LinkGraph(
        n, links.n_segments, heads.astype(np.int64), tails.astype(np.int64), kinds, refs, weights
    )
