"""The knowledge graph of a snapshot for one query's coordinates, as sparse matrices.

Nodes are the snapshot's entities and retrievable segments; edges are the facts valid at
the query's reference time (stable unless the query is speculative), each with its
relation, confidence and supporting segments, and the segment–entity mention links.
Every graph strategy reads this one structure, selected once per (valid time,
speculative) from the snapshot's graph index (`transforms.graph_index`, precomputed at
build time and memory-mapped) and kept in the view's cache, so a query never loops over
all nodes or facts in Python: lookups go through CSR rows, whole-graph steps are sparse
matrix products, and fact rows are read only when a strategy touches them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from memory.fact_columns import FactColumns, FactRows, SelectedRows
from memory.snapshot_view import NodeNames, QueryContext, SnapshotView, positions_of
from transforms.graph_index import DEFAULT_COORDINATES, GraphIndex
from transforms.graph_links import fact_statement, linearize
from transforms.graph_structures import entity_adjacency, entity_fact_incidence


@dataclass(frozen=True)
class Edge:
    """One fact seen from an entity: the fact's index, the entity at the other end, and
    whether the fact points away from (True) or towards (False) the entity."""

    fact: int
    other: int
    outgoing: bool


@dataclass
class MemoryGraph:
    """Entities, segments and the query's facts of a snapshot, indexed for graph search."""

    entity_ids: list[str]
    entity_names: list[str]
    segment_ids: list[str]
    facts: Sequence[Mapping[str, Any]]
    """The query's facts whose both ends are entities of the snapshot, read as rows
    (`FactRows` over the index: a row becomes a dict only when read)."""
    fact_head: np.ndarray
    fact_tail: np.ndarray
    fact_confidence: np.ndarray
    fact_vectors: np.ndarray | SelectedRows
    """Normalised statement embeddings, row i for facts[i] (`SelectedRows` of the index's
    mapped matrix: indexed and multiplied without copying the whole selection)."""
    entity_facts: sp.csr_matrix
    """n_entities x n_facts: +1 where the entity is the head, -1 where it is the tail."""
    mentions: sp.csr_matrix
    """n_segments x n_entities: 1 where the segment mentions the entity."""
    fact_segments: sp.csr_matrix
    """n_facts x n_segments: 1 where the segment supports the fact."""

    names: NodeNames | None = None
    """The view's names the id lists come from, whose lookups the graph shares (a graph
    per query coordinate, one lookup per view); None: the graph makes its own."""

    @functools.cached_property
    def entity_position(self) -> dict[str, int]:
        if self.names is not None:
            return self.names.entity_position
        return positions_of(self.entity_ids)

    @functools.cached_property
    def segment_position(self) -> dict[str, int]:
        if self.names is not None:
            return self.names.segment_position
        return positions_of(self.segment_ids)

    @functools.cached_property
    def entity_adjacency(self) -> sp.csr_matrix:
        """Symmetric entity x entity matrix; weight = summed confidence of the facts between."""
        return entity_adjacency(
            self.fact_head, self.fact_tail, self.fact_confidence, len(self.entity_ids)
        )

    @functools.cached_property
    def segment_facts(self) -> sp.csr_matrix:
        """n_segments x n_facts: the facts each segment supports."""
        return self.fact_segments.T.tocsr()

    @functools.cached_property
    def entity_segments(self) -> sp.csr_matrix:
        """n_entities x n_segments: the segments that mention each entity (episodes)."""
        return self.mentions.T.tocsr()

    @property
    def n_entities(self) -> int:
        return len(self.entity_ids)

    def edge_arrays(self, entity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The facts touching `entity` as arrays (in `edges` order): fact indices, the
        entity at each one's other end, and whether it points away from the entity."""
        start, end = self.entity_facts.indptr[entity], self.entity_facts.indptr[entity + 1]
        facts = np.asarray(self.entity_facts.indices[start:end], np.int64)
        outgoing = self.entity_facts.data[start:end] > 0
        others = np.where(outgoing, self.fact_tail[facts], self.fact_head[facts])
        return facts, np.asarray(others, np.int64), outgoing

    def edges(self, entity: int) -> list[Edge]:
        """The facts touching `entity`, both directions (one CSR row, no scan)."""
        facts, others, outgoing = self.edge_arrays(entity)
        return [
            Edge(fact, other, out)
            for fact, other, out in zip(
                facts.tolist(), others.tolist(), outgoing.tolist(), strict=True
            )
        ]

    def segments_of_fact(self, fact: int) -> list[int]:
        row = self.fact_segments
        return row.indices[row.indptr[fact] : row.indptr[fact + 1]].tolist()

    def segments_of_entity(self, entity: int) -> list[int]:
        row = self.entity_segments
        return row.indices[row.indptr[entity] : row.indptr[entity + 1]].tolist()

    def facts_of_segment(self, segment: int) -> list[int]:
        row = self.segment_facts
        return row.indices[row.indptr[segment] : row.indptr[segment + 1]].tolist()

    def statement(self, fact: int) -> str:
        f = self.facts[fact]
        return fact_statement(f["head_name"], f["relation"], f["tail_name"])

    def linearized(self, fact: int) -> str:
        """GRAM's `[s] -[p]-> [o]` form of one fact."""
        f = self.facts[fact]
        return linearize(f["head_name"], f["relation"], f["tail_name"])

    def path_text(self, facts: list[int]) -> str:
        """A path of facts linearized edge by edge: `[a] -[r]-> [b] ; [b] -[q]-> [c]`."""
        return " ; ".join(self.linearized(f) for f in facts)


def graph_of(view: SnapshotView, query: QueryContext) -> MemoryGraph:
    """The graph for the query's fact coordinates, selected from the snapshot's graph index
    on first use and cached."""
    key = ("memory_graph", *query.fact_filter)
    if key not in view.cache:
        index = view.graph_index
        stored = index.default_graph if query.fact_filter == DEFAULT_COORDINATES else None
        view.cache[key] = _select(
            index, view.node_names, view.fact_columns, view.fact_mask(query), stored
        )
    return view.cache[key]


def _select(
    index: GraphIndex,
    names: NodeNames,
    columns: FactColumns,
    mask: np.ndarray,
    stored: tuple[sp.csr_matrix, sp.csr_matrix] | None = None,
) -> MemoryGraph:
    """The graph of the facts in `mask` whose both ends are entities: column selections of
    the index, with the entity x fact incidence built from the selected ends (`stored`:
    the incidence and support the index holds for this selection, mapped)."""
    positions = np.flatnonzero(mask & index.in_graph)
    head = np.asarray(index.fact_head[positions], np.int64)
    tail = np.asarray(index.fact_tail[positions], np.int64)
    entity_facts, fact_segments = stored or (
        entity_fact_incidence(head, tail, index.entity_rows.num_rows),
        index.fact_segments[positions],
    )
    return MemoryGraph(
        entity_ids=names.entity_ids,
        entity_names=names.entity_names,
        segment_ids=names.segment_ids,
        facts=FactRows(columns, positions),
        fact_head=head,
        fact_tail=tail,
        fact_confidence=np.asarray(index.fact_confidence[positions], np.float64),
        fact_vectors=SelectedRows(index.fact_vectors, positions),
        entity_facts=entity_facts,
        mentions=index.mentions,
        fact_segments=fact_segments,
        names=names,
    )


def search_graph(view: SnapshotView, query: QueryContext) -> MemoryGraph:
    """Every fact version of the snapshot, whatever its validity and confidence: the graph
    REAL's beams walk (`memory.real.space`), whose edge statement vectors the index can
    store entity by entity (`search_edge_vectors`)."""
    return graph_of(view, QueryContext(query.text, query.k, None, True))


def search_edge_vectors(view: SnapshotView, graph: MemoryGraph) -> np.ndarray | None:
    """The index's `search_edge_vectors` where it stores them for `graph` (the search
    graph, whose entity x fact incidence has one entry per row: entity `e`'s edges are
    rows `entity_facts.indptr[e]` to `indptr[e + 1]`, in its row's order); None otherwise."""
    stored = view.graph_index.search_edge_vectors
    if stored is None or len(stored) != graph.entity_facts.nnz:
        return None
    return stored
