"""`memorai_paths.segments_paths`: the leading facts of several segments found together
give each segment the paths that the loop over every fact of its entities finds."""

from __future__ import annotations

import numpy as np

from memory.graph import graph_of
from memory.memorai_paths import anchors_of, paths_through, segments_paths
from memory.snapshot_view import QueryContext


def test_batched_paths_are_each_segments_own(graph_memory) -> None:
    graph = graph_of(graph_memory._view, QueryContext("Who is Priya?", 5))
    rng = np.random.default_rng(5)
    n_facts, n_entities = len(graph.facts), len(graph.entity_ids)
    checked = 0
    for _ in range(20):
        seed_facts = set(rng.choice(n_facts, 3, replace=False).tolist())
        seed_entities = set(rng.choice(n_entities, 3, replace=False).tolist())
        anchors = anchors_of(graph, seed_entities, seed_facts)
        scored = np.union1d(rng.choice(n_facts, max(n_facts // 2, 1), replace=False), [*seed_facts])
        fact_score = dict(zip(scored.tolist(), rng.random(len(scored)).tolist(), strict=True))
        segments = rng.permutation(len(graph.segment_ids)).tolist()  # any order
        found = segments_paths(graph, segments, anchors, seed_facts, fact_score, 3)
        row = graph.mentions
        for segment, paths in zip(segments, found, strict=True):
            mentioned = sorted(set(row.indices[row.indptr[segment] : row.indptr[segment + 1]]))
            every = graph.entity_facts[mentioned].indices if mentioned else []
            assert paths == paths_through(graph, segment, every, anchors, seed_facts, fact_score, 3)
            checked += bool(paths)
    assert checked > 10
    assert segments_paths(graph, [], anchors, seed_facts, fact_score, 3) == []
