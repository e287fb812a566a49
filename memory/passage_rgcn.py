"""KGERMAR's structural bank over the passage graph: the R-GCN of the paper's eq. 5 run
without learned weights over the LLM-free graph (`memory.passage_graph`'s nodes), and the
query's cosine against the structural embeddings it makes, computed by propagating the
query's similarities (`transforms.relational_mean`: the layers are linear, so the cosine
of the query with h^(L) equals the layers applied to the query's cosines with h^(0)).

The graph, as the paper's KG (nodes over [segments | passage nodes], typed edges):
- a segment's text is its h^(0) (the paper's text embedding e_text); an entity's h^(0)
  is its fused structure-table vector (R-GCN + text, the snapshot's "structure" table);
- every passage node is a KG entity: named entities, document topic/title nodes,
  documents, sessions, speakers, days/weeks/months, phrase nodes;
- relation types: a segment's links to nodes of one kind are one relation (entity,
  topic, document, session, speaker, day, week, month, phrase), so each kind is averaged
  over separately (eq. 5's 1 / |N_i^r|); a node's links to its segments are one relation
  ("mentioned in", the mean over its segments: a node shared by two passages passes their
  similarity at full strength, a hub shared by a thousand passes the corpus average);
  turn – next turn is one relation (both directions, as N_i^r holds incoming and outgoing
  neighbours); each typed fact's relation label is a relation between its two entities.
- L = `LAYERS` layers: segment -> node -> segment, the two hops that join a question's
  first passage to its second through the title or name they share.

What the query scores with is the caller's (`memory.strategies.kgermar_fusion`): any
non-negative values on segments and nodes, e.g. the query's similarity to the segments'
text and to the structure table's entities, taken as 0 off the entries given (as an ANN
index returns only its top).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc
import scipy.sparse as sp

from memory.csr import add_rows
from memory.graph import graph_of
from memory.snapshot_view import QueryContext, SnapshotView
from transforms.relational_mean import relational_mean

LAYERS = 2
SPREAD_THRESHOLD = 1e-4
"""Entries below this value are not spread further (option "spread_threshold"; the seeds
sum to 1): a hub node of d segments holds at most its segments' mean, so past d ~ 10^4
it adds under 10^-4 to each of them and the layer skips the d additions. A bound on the
layer's frontier, as the passage walk's push threshold bounds the walk's."""
NODE_KINDS = ("topic", "document", "session", "speaker", "day", "week", "month", "phrase")
"""Passage-node kinds by id prefix (`<kind>:`); any other node is an entity."""


@dataclass(frozen=True)
class PassageRGCN:
    """The aggregation operator over [segments | nodes], transposed for spreading."""

    n_segments: int
    node_position: dict[str, int]
    spread: sp.csr_matrix
    """M transposed: row j lists where node j's value goes (M[:, j])."""

    def propagate(
        self,
        seeds: np.ndarray,
        values: np.ndarray,
        layers: int = LAYERS,
        threshold: float = SPREAD_THRESHOLD,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The segments reached after `layers` layers h <- h + M h from the entries
        `values` at the distinct positions `seeds` (over [segments | nodes]), in position
        order, and their scores. Each layer spreads only the entries it has reached whose
        value is at least `threshold` (0: all of them, the exact layers), in position
        order.

        A layer adds into h in place: the values it spreads are gathered before it adds
        anything, so h + M h comes out as it would into a copy, bit for bit. The entries
        reached are marked in a mask over the positions and read back in position order
        (one pass over the mask a layer) rather than merged as sorted sets: at 100k facts
        (82k positions, ~10-20k entries reached by the second layer) the merges' hashing
        took ~0.75 ms of the ~0.8 ms a query, against ~0.07 ms for the whole of it now;
        at 1M facts a pass over the mask costs ~0.3 ms."""
        h = np.zeros(self.spread.shape[0])
        h[seeds] = values
        reached = np.zeros(len(h), bool)
        reached[seeds] = True
        spreading = np.sort(seeds)
        for layer in range(layers):
            if threshold > 0:
                spreading = spreading[h[spreading] >= threshold]
            reached[add_rows(self.spread, spreading, h[spreading], h)] = True
            if layer + 1 < layers:
                spreading = np.flatnonzero(reached)
        segments = np.flatnonzero(reached[: self.n_segments])
        return segments, h[segments]


def passage_rgcn(view: SnapshotView, query: QueryContext) -> PassageRGCN:
    """The operator for the query's fact coordinates, built once per view."""
    key = ("kgermar_passage_rgcn", *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = _build(view, query)
    return view.cache[key]


def _build(view: SnapshotView, query: QueryContext) -> PassageRGCN:
    index = view.graph_index
    links = index.segment_nodes.tocoo()
    n_segments, n_nodes = index.segment_nodes.shape
    kind = np.full(n_nodes, len(NODE_KINDS), np.int64)  # entity
    for number, name in enumerate(NODE_KINDS):
        found = pc.starts_with(index.node_ids, f"{name}:").to_numpy(zero_copy_only=False)
        kind[np.asarray(found, bool)] = number
    segment, node = links.row.astype(np.int64), links.col.astype(np.int64) + n_segments
    mentioned_in = len(NODE_KINDS) + 1
    next_turn = mentioned_in + 1
    turns = np.flatnonzero(index.next_segment >= 0)
    following = np.asarray(index.next_segment[turns], np.int64)
    graph = graph_of(view, query)
    head = index.entity_node[graph.fact_head]
    tail = index.entity_node[graph.fact_tail]
    kept = (head >= 0) & (tail >= 0) & (head != tail)
    labels = view.fact_columns.codes("relation")
    relation = (
        labels[1][graph.facts.positions(np.arange(len(graph.fact_head)))]
        if labels is not None
        else np.zeros(len(graph.fact_head), np.int64)
    )
    head, tail = head[kept] + n_segments, tail[kept] + n_segments
    fact_relation = relation[kept] + next_turn + 1
    target = np.concatenate([segment, node, turns, following, head, tail])
    source = np.concatenate([node, segment, following, turns, tail, head])
    relations = np.concatenate(
        [
            kind[node - n_segments],
            np.full(len(node), mentioned_in),
            np.full(2 * len(turns), next_turn),
            fact_relation,
            fact_relation,
        ]
    )
    mean = relational_mean(n_segments + n_nodes, target, source, relations)
    spread = mean.T.tocsr()
    spread.indptr = spread.indptr.astype(np.int64)
    spread.indices = spread.indices.astype(np.int64)
    return PassageRGCN(n_segments, view.node_names.passage_position, spread)
