"""The knowledge graph of a snapshot for one query's coordinates, as sparse matrices.

Nodes are the snapshot's entities and retrievable segments; edges are the facts valid at
the query's reference time (stable unless the query is speculative), each with its
relation, confidence and supporting segments, and the segment–entity mention links.
Every graph strategy reads this one structure, built once per (valid time, speculative)
and kept in the view's cache, so a query never loops over all nodes in Python: lookups
go through CSR rows and whole-graph steps are sparse matrix products.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from memory.snapshot_view import QueryContext, SnapshotView
from transforms.embedding import encode
from transforms.graph_links import fact_statement, linearize


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
    facts: list[dict[str, Any]]
    """The query's facts whose both ends are entities of the snapshot."""
    fact_head: np.ndarray
    fact_tail: np.ndarray
    fact_confidence: np.ndarray
    fact_vectors: np.ndarray
    """Normalised statement embeddings, row i for facts[i]."""
    entity_facts: sp.csr_matrix
    """n_entities x n_facts: +1 where the entity is the head, -1 where it is the tail."""
    mentions: sp.csr_matrix
    """n_segments x n_entities: 1 where the segment mentions the entity."""
    fact_segments: sp.csr_matrix
    """n_facts x n_segments: 1 where the segment supports the fact."""

    @functools.cached_property
    def entity_position(self) -> dict[str, int]:
        return {e: i for i, e in enumerate(self.entity_ids)}

    @functools.cached_property
    def segment_position(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self.segment_ids)}

    @functools.cached_property
    def entity_adjacency(self) -> sp.csr_matrix:
        """Symmetric entity x entity matrix; weight = summed confidence of the facts between."""
        n = len(self.entity_ids)
        upper = sp.coo_matrix(
            (self.fact_confidence, (self.fact_head, self.fact_tail)), shape=(n, n)
        ).tocsr()
        return (upper + upper.T).tocsr()

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

    def edges(self, entity: int) -> list[Edge]:
        """The facts touching `entity`, both directions (one CSR row, no scan)."""
        start, end = self.entity_facts.indptr[entity], self.entity_facts.indptr[entity + 1]
        found = []
        for fact, sign in zip(
            self.entity_facts.indices[start:end], self.entity_facts.data[start:end], strict=True
        ):
            outgoing = sign > 0
            other = self.fact_tail[fact] if outgoing else self.fact_head[fact]
            found.append(Edge(int(fact), int(other), bool(outgoing)))
        return found

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
    """The graph for the query's fact coordinates, built on first use and cached."""
    key = ("memory_graph", *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = _build(view, query)
    return view.cache[key]


def _build(view: SnapshotView, query: QueryContext) -> MemoryGraph:
    entity_ids = view.entities.column("entity_id").to_pylist()
    names = view.entities.column("name").to_pylist()
    entity_position = {e: i for i, e in enumerate(entity_ids)}
    segment_ids = view.segments.column("segment_id").to_pylist()
    segment_position = {s: i for i, s in enumerate(segment_ids)}
    facts = [
        f
        for f in view.facts(query)
        if f["head_entity_id"] in entity_position and f["tail_entity_id"] in entity_position
    ]
    head = np.array([entity_position[f["head_entity_id"]] for f in facts], dtype=np.int64)
    tail = np.array([entity_position[f["tail_entity_id"]] for f in facts], dtype=np.int64)
    confidence = np.array([float(f["confidence"]) for f in facts], dtype=np.float64)
    n_e, n_f, n_s = len(entity_ids), len(facts), len(segment_ids)
    fact_index = np.arange(n_f)
    entity_facts = sp.coo_matrix(
        (
            np.concatenate([np.ones(n_f), -np.ones(n_f)]),
            (np.concatenate([head, tail]), np.concatenate([fact_index, fact_index])),
        ),
        shape=(n_e, n_f),
    ).tocsr()
    rows, cols = [], []
    for s_index, linked in enumerate(view.segments.column("entity_ids").to_pylist()):
        for entity in linked or []:
            if entity in entity_position:
                rows.append(s_index)
                cols.append(entity_position[entity])
    mentions = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_s, n_e), dtype=np.float64)
    mentions.data[:] = 1.0
    rows, cols = [], []
    for f_index, fact in enumerate(facts):
        for segment in fact["source_segment_ids"]:
            if segment in segment_position:
                rows.append(f_index)
                cols.append(segment_position[segment])
    fact_segments = sp.csr_matrix(
        (np.ones(len(rows)), (rows, cols)), shape=(n_f, n_s), dtype=np.float64
    )
    fact_segments.data[:] = 1.0  # a segment cited twice supports a fact once
    return MemoryGraph(
        entity_ids=entity_ids,
        entity_names=names,
        segment_ids=segment_ids,
        facts=facts,
        fact_head=head,
        fact_tail=tail,
        fact_confidence=confidence,
        fact_vectors=_fact_vectors(view, facts),
        entity_facts=entity_facts,
        mentions=mentions,
        fact_segments=fact_segments,
    )


def _fact_vectors(view: SnapshotView, facts: list[dict[str, Any]]) -> np.ndarray:
    """Statement vectors from the snapshot's facts table; facts it lacks (a snapshot taken
    before the table existed) are embedded here once per view and added to its vectors."""
    if not facts:
        return np.zeros((0, 0), dtype=np.float32)
    stored = view.fact_vectors
    missing = {f["fact_id"]: f for f in facts if f["fact_id"] not in stored.index}
    if missing:
        texts = [
            fact_statement(f["head_name"], f["relation"], f["tail_name"]) for f in missing.values()
        ]
        embedded = encode(texts, view.snapshot.embedding_model)
        stored = view.fact_vectors = stored.extended(list(missing), embedded)
    return stored.rows([f["fact_id"] for f in facts])
