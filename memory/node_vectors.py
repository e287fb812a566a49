"""Embedding vectors of chosen graph nodes, read without scanning whole tables per query.

Segments: random-access reads of the pinned LanceDB segments table at the rows of the
requested segments (`take_offsets`; `MemoryGraph.segment_ids` is in table row order, so a
graph position is a row offset). Entities: the vector column the view already holds,
turned into one matrix per view (cached). Facts: `MemoryGraph.fact_vectors`.
"""

from __future__ import annotations

import numpy as np

from memory.graph import MemoryGraph
from memory.snapshot_view import SnapshotView


def _matrix(column: object, rows: int) -> np.ndarray:
    flat = np.asarray(column.combine_chunks().flatten(), dtype=np.float32)  # type: ignore[attr-defined]
    return flat.reshape(rows, -1) if rows else np.zeros((0, 0), dtype=np.float32)


def segment_vectors(view: SnapshotView, graph: MemoryGraph, positions: np.ndarray) -> np.ndarray:
    """Vectors of the segments at graph `positions` (rows in that order)."""
    if len(positions) == 0:
        return np.zeros((0, 0), dtype=np.float32)
    offsets = sorted({int(p) for p in positions})
    rows = view.table("segments").take_offsets(offsets).select(["segment_id", "vector"]).to_arrow()
    by_id = dict(
        zip(
            rows.column("segment_id").to_pylist(),
            _matrix(rows.column("vector"), rows.num_rows),
            strict=True,
        )
    )
    return np.stack([by_id[graph.segment_ids[p]] for p in positions])


def entity_vectors(view: SnapshotView) -> np.ndarray:
    """All entity vectors in `view.entities` (= graph entity) order, built once per view."""
    return view.entity_vectors


def fact_vectors(graph: MemoryGraph, positions: np.ndarray) -> np.ndarray:
    return graph.fact_vectors[np.asarray(positions, dtype=np.int64)]


def cosine(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of each row to `query` (rows of zeros score 0)."""
    if len(vectors) == 0:
        return np.zeros(0)
    norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    return np.divide(vectors @ query, norms, out=np.zeros(len(vectors)), where=norms > 0)
