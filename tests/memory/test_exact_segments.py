"""The exact segment search from the graph index: LanceDB's exact order, ties by row, and
the search a view uses where the segments table has no vector index."""

from __future__ import annotations

import numpy as np

from memory.exact_segments import ExactSegments
from memory.linking import nearest_segments
from memory.snapshot_view import SnapshotView


def test_nearest_in_squared_distance_order_ties_by_row() -> None:
    """Small integer vectors make every distance exact in float32, so the order (and the
    ties, from repeated rows) is that of the directly computed distances."""
    rng = np.random.default_rng(3)
    vectors = rng.integers(-3, 4, (200, 8)).astype(np.float32)
    vectors[150:] = vectors[:50]
    ids = [f"s{i}" for i in range(200)]
    retrievable = np.flatnonzero(rng.random(200) < 0.7)
    for rows in (None, retrievable):
        search = ExactSegments.of(ids, vectors, rows)
        for query in rng.integers(-3, 4, (5, 8)).astype(np.float32):
            candidates = np.arange(200) if rows is None else rows
            distance = ((vectors[candidates] - query) ** 2).sum(axis=1)
            expected = candidates[np.argsort(distance, kind="stable")[:12]]
            found = search.nearest(query, 12)
            assert [s for s, _ in found] == [ids[i] for i in expected]
            assert [c for _, c in found] == [
                round(1.0 - float(d) / 2.0, 6) for d in np.sort(distance, kind="stable")[:12]
            ]


def test_view_searches_the_unindexed_sample_exactly_as_lancedb(graph_memory) -> None:
    """The sample's segments table has no vector index: its view searches the mapped
    vectors, and finds what LanceDB's scan finds (a view without the mapped index)."""
    view = graph_memory._view
    assert view.exact_segments is not None
    scanned = SnapshotView(view.snapshot, view.connect, view.db)
    assert scanned.exact_segments is None
    for text in ("Who is the CEO of Acme?", "Where did Priya work?", "billing dispute"):
        vector = view.embed_query(text)
        exact = nearest_segments(view, vector, 8)
        lance = nearest_segments(scanned, vector, 8)
        assert [s for s, _ in exact] == [s for s, _ in lance]
        assert np.allclose([c for _, c in exact], [c for _, c in lance], atol=2e-6)
