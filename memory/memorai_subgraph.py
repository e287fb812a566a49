"""MemORAI's query-focused subgraph (§3.3.1) and its query-conditioned edge weights (Eq. 1)
on the snapshot's heterogeneous graph of entity, segment and fact nodes.

Mapping to kgmem's data model (the paper's graph has entity, turn and topic-segment nodes
and entity–relation–entity edges):
- the paper's turn nodes are our retrievable segments (turns and document chunks); the
  topic-segment level with LLM summaries does not exist in a snapshot, so Eq. 1's third
  case (turn → segment, the mean entity similarity of the turn) has no edge to weigh;
- a relation edge e1 -r-> e2 is reified as a fact node f between e1 and e2 (so it can be a
  seed, carry a vector and be cited on a path), and the fact's `source_segment_ids` (the
  paper's `source_turns`) become fact–segment edges;
- every edge is traversable both ways (§3.2 writes e <-> τ), and both directions carry the
  same type-specific weight, as the paper defines none for the reverse direction:
  entity–segment: sim(q, entity) (Eq. 1, first case); entity–fact and fact–segment:
  sim(q, fact statement) (Eq. 1, second case: the relation's weight).

One hop (the paper: "all directly connected turns, entities, and segments") from an entity
reaches the segments mentioning it, its facts and their other ends (a relation edge is one
hop in the paper); from a segment, the entities it mentions and the facts it supports;
from a fact, its two ends and its supporting segments. A fact seed's two ends are seeds
too (a seed relation edge brings its endpoints), so their neighbours are included. The
edge set is the subgraph induced by the node set.

The structural matrices are built once per (view, fact coordinates) and cached; a query
reads the CSR rows of its seeds and of its nodes straight from the arrays
(`memory.csr.row_entries`) and keeps the entries whose column is a node (`induced`),
never scanning all nodes: scipy's `adjacency[nodes][:, nodes]` gives the same matrix but
filled a lookup over all 2.3M nodes at 1M facts and validated each request (1.8 ms for a
small subgraph; 0.3 ms this way).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from memory.csr import row_entries
from memory.graph import MemoryGraph, graph_of
from memory.snapshot_view import QueryContext, SnapshotView
from transforms.graph_index import DEFAULT_COORDINATES
from transforms.graph_structures import memorai_structure

ENTITY, SEGMENT, FACT = 0, 1, 2
KIND_NAMES = ("entity", "segment", "fact")


@dataclass(frozen=True)
class Structure:
    """Unweighted edges over the global node order [entities | segments | facts]."""

    adjacency: sp.csr_matrix
    """Symmetric 0/1: entity–segment mentions, entity–fact ends, fact–segment support."""
    expansion: sp.csr_matrix
    """`adjacency` plus entity–entity through one fact: what one hop reaches."""
    n_entities: int
    n_segments: int
    n_facts: int

    @property
    def offsets(self) -> tuple[int, int, int]:
        return 0, self.n_entities, self.n_entities + self.n_segments

    def kinds(self, nodes: np.ndarray) -> np.ndarray:
        """ENTITY / SEGMENT / FACT of each global node index."""
        return np.searchsorted(np.array(self.offsets[1:]), nodes, side="right")


@dataclass(frozen=True)
class QuerySubgraph:
    """Nodes of G_q as graph positions per kind, and its induced adjacency in the local
    order [entities | segments | facts]."""

    entities: np.ndarray
    segments: np.ndarray
    facts: np.ndarray
    adjacency: sp.csr_matrix

    @property
    def size(self) -> int:
        return len(self.entities) + len(self.segments) + len(self.facts)

    @property
    def kinds(self) -> np.ndarray:
        counts = (len(self.entities), len(self.segments), len(self.facts))
        return np.repeat(np.array([ENTITY, SEGMENT, FACT]), counts)


def structure_of(view: SnapshotView, query: QueryContext) -> Structure:
    """The heterogeneous structure for the query's fact coordinates: mapped from the graph
    index for the default coordinates (now, not speculative) when its build stored it,
    else built once and cached."""
    key = ("memorai_structure", *query.fact_filter)
    if key not in view.cache:
        graph = graph_of(view, query)
        stored = view.graph_index.memorai_structure
        if query.fact_filter == DEFAULT_COORDINATES and stored is not None:
            view.cache[key] = Structure(*stored, graph.n_entities, *_counts(graph))
        else:
            view.cache[key] = build_structure(graph)
    return view.cache[key]


def build_structure(graph: MemoryGraph) -> Structure:
    adjacency, expansion = memorai_structure(
        graph.mentions, graph.entity_facts, graph.fact_segments, graph.entity_adjacency
    )
    return Structure(adjacency, expansion, graph.n_entities, *_counts(graph))


def _counts(graph: MemoryGraph) -> tuple[int, int]:
    return len(graph.segment_ids), len(graph.facts)


def global_nodes(
    structure: Structure, entities: list[int], segments: list[int], facts: list[int]
) -> np.ndarray:
    """Graph positions per kind -> global node indices."""
    start_e, start_s, start_f = structure.offsets
    return np.unique(
        np.concatenate(
            [
                np.asarray(entities, dtype=np.int64) + start_e,
                np.asarray(segments, dtype=np.int64) + start_s,
                np.asarray(facts, dtype=np.int64) + start_f,
            ]
        )
    )


def query_subgraph(structure: Structure, seeds: np.ndarray) -> QuerySubgraph:
    """G_q: the seeds (global indices) and their one-hop neighbours, with induced edges."""
    seeds = np.unique(np.asarray(seeds, dtype=np.int64))
    reached = row_entries(structure.expansion, seeds)[0]
    nodes = np.unique(np.concatenate([seeds, reached]))  # sorted: entities, segments, facts
    kinds = structure.kinds(nodes)
    start = structure.offsets
    return QuerySubgraph(
        entities=nodes[kinds == ENTITY] - start[ENTITY],
        segments=nodes[kinds == SEGMENT] - start[SEGMENT],
        facts=nodes[kinds == FACT] - start[FACT],
        # no entity–entity edge in the adjacency: entity rows mirrored, not read
        adjacency=induced(structure.adjacency, nodes, int(np.sum(kinds == ENTITY))),
    )


def induced(matrix: sp.csr_matrix, nodes: np.ndarray, mirrored: int = 0) -> sp.csr_matrix:
    """`matrix[nodes][:, nodes]` for ascending distinct `nodes`, entries of each row in
    stored (ascending) order.

    The rows of `nodes[mirrored:]` are read, their entries whose column is one of `nodes`
    kept and renumbered by its place in `nodes` (looked up in this thread's lookup over
    all columns, zero outside a call: no pass over all columns, where scipy fills a new
    one per call). The rows of the first `mirrored` nodes are not read but mirrored from
    those entries, which is exact when `matrix` is symmetric and has no entry among those
    nodes: MemORAI's adjacency has no entity–entity edge, and an entity's row is where
    the size is (a hub's rows held ~215k entries in a 2,700-node subgraph at 1M facts,
    its segments' and facts' rows a few each)."""
    read = nodes[mirrored:]
    columns, values, counts = row_entries(matrix, read)
    place = _lookup(matrix.shape[1])
    place[nodes] = np.arange(1, len(nodes) + 1, dtype=place.dtype)
    local = place[columns].astype(np.int64) - 1
    place[nodes] = 0
    inside = local >= 0
    rows = np.repeat(np.arange(mirrored, len(nodes)), counts)[inside]
    local, values = local[inside], values[inside]
    if mirrored:
        back = local < mirrored
        rows, local = np.concatenate([rows, local[back]]), np.concatenate([local, rows[back]])
        values = np.concatenate([values, values[back]])
        order = np.lexsort((local, rows))
        rows, local, values = rows[order], local[order], values[order]
    indptr = np.zeros(len(nodes) + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=len(nodes)), out=indptr[1:])
    return sp.csr_matrix((values, local, indptr), shape=(len(nodes), len(nodes)))


_LOOKUPS = threading.local()


def _lookup(size: int) -> np.ndarray:
    """This thread's zeroed int32 array of `size` entries (4 bytes a node: 9 MB at 1M
    facts), kept between calls."""
    held = getattr(_LOOKUPS, "arrays", None)
    if held is None:
        held = _LOOKUPS.arrays = {}
    if size not in held:
        held[size] = np.zeros(size, np.int32)
    return held[size]


def edge_weights(subgraph: QuerySubgraph, node_similarity: np.ndarray) -> sp.csr_matrix:
    """Eq. 1 on G_q: an edge touching a fact weighs sim(q, fact); an entity–segment edge
    weighs sim(q, entity); `node_similarity` is per local node (segments' values unused).
    Pass ones for the uniform (w = 1) variant."""
    edges = subgraph.adjacency.tocoo()
    kinds = subgraph.kinds
    row_kind, col_kind = kinds[edges.row], kinds[edges.col]
    carrier = np.where(
        row_kind == FACT,
        edges.row,
        np.where(col_kind == FACT, edges.col, np.where(row_kind == ENTITY, edges.row, edges.col)),
    )
    weights = np.asarray(node_similarity, dtype=np.float64)[carrier]
    return sp.csr_matrix((weights, (edges.row, edges.col)), shape=edges.shape)
