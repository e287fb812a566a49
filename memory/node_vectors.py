"""Embedding vectors of chosen graph nodes, read without scanning whole tables per query.

Segments: the rows of the graph index's segment matrix (`GraphIndex.segment_vectors`, the
segments table's stored vectors in graph position order); entities: rows of the view's
entity vectors; facts: rows of `MemoryGraph.fact_vectors`.

Statement and segment rows are copied out of their files
(`transforms.mapped_rows.read_rows_from_file`): a query's facts and segments are new
neighbourhoods of its seeds, seldom read again, and a gather through the mapping faults a
64 KB window per row and spends it from the resident budget, whose hand-back costs as
much again. Entity rows are gathered through the mapping (`read_rows`): the entity matrix
is a quarter of the statement matrix and hub entities recur from query to query, so its
mapped pages are reused. Measured at 1M facts in one process, MemORAI's 30 queries
alternating both ways: facts 222 ms in all from the file against 544 ms through the
mapping, segments 227 against 383 ms, entities 395 against 294 ms. Segment rows were once read
from the LanceDB table (`take_offsets`): the same values, at 120 ms a query for MemORAI's
subgraph segments at 1M facts.
"""

from __future__ import annotations

import numpy as np

from memory.fact_columns import SelectedRows
from memory.graph import MemoryGraph
from memory.snapshot_view import SnapshotView
from transforms.mapped_rows import read_rows, read_rows_from_file


def segment_vectors(view: SnapshotView, graph: MemoryGraph, positions: np.ndarray) -> np.ndarray:
    """Vectors of the segments at graph `positions` (rows in that order); the graph's
    segment positions are the index's (`MemoryGraph.segment_ids` is its segment order)."""
    if len(positions) == 0:
        return np.zeros((0, 0), dtype=np.float32)
    return read_rows_from_file(view.graph_index.segment_vectors, np.asarray(positions, np.int64))


def entity_vectors(view: SnapshotView, positions: np.ndarray) -> np.ndarray:
    """Vectors of the entities at graph `positions` (`view.entities` order = graph entity
    order), rows in that order."""
    return read_rows(view.entity_vectors, np.asarray(positions, np.int64))


def fact_vectors(graph: MemoryGraph, positions: np.ndarray) -> np.ndarray:
    """Statement vectors of the facts at graph `positions`, rows in that order."""
    positions = np.asarray(positions, dtype=np.int64)
    vectors = graph.fact_vectors
    if isinstance(vectors, SelectedRows):
        return vectors.from_file(positions)
    return read_rows_from_file(vectors, positions)


def cosine(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of each row to `query` (rows of zeros score 0)."""
    if len(vectors) == 0:
        return np.zeros(0)
    norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    return np.divide(vectors @ query, norms, out=np.zeros(len(vectors)), where=norms > 0)
