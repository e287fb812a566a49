"""`memorai_paths.segments_paths`: the leading facts of several segments found together
give each segment the paths that the loop over every fact of its entities finds."""

from __future__ import annotations

import numpy as np

from memory.graph import graph_of
from memory.memorai_paths import segments_paths
from memory.snapshot_view import QueryContext
from tests.memory.memorai_cases import paths_by_every_fact, random_ask


def test_batched_paths_are_each_segments_own(graph_memory) -> None:
    graph = graph_of(graph_memory._view, QueryContext("Who is Priya?", 5))
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(20):
        anchors, seed_facts, fact_score = random_ask(graph, rng, 0.5)
        segments = rng.permutation(len(graph.segment_ids)).tolist()  # any order
        found = segments_paths(graph, segments, anchors, seed_facts, fact_score, 3)
        for segment, paths in zip(segments, found, strict=True):
            assert paths == paths_by_every_fact(graph, segment, anchors, seed_facts, fact_score)
            checked += bool(paths)
    assert checked > 10
    assert segments_paths(graph, [], anchors, seed_facts, fact_score, 3) == []
