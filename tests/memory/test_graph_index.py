"""The graph a query reads comes from the snapshot's graph index: the build writes it, and
selecting a query's coordinates from it gives exactly the graph the fact store's as-of
read gives (same facts in the same order, same links, same vectors); strategies answer
the same from the mapped index and from one computed in the query process."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import numpy as np
import pytest

from memory import Memory
from memory.graph import graph_of
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.registry import STRATEGY_NAMES
from stores.fact_queries import AsOf, facts_table_as_of
from stores.graph_index import graph_index_dir, is_complete

COORDINATES = [
    (None, False),
    (None, True),
    (datetime(2021, 6, 1, tzinfo=UTC), False),
    (datetime(2022, 7, 15, tzinfo=UTC), True),
]


@pytest.fixture(scope="module")
def view(graph_memory) -> SnapshotView:
    return graph_memory._view


def test_the_build_wrote_the_snapshots_index(graph_build, view) -> None:
    directory = graph_index_dir(graph_build, view.snapshot.snapshot_id)
    assert is_complete(directory)
    assert view.index_dir == directory
    assert isinstance(view.graph_index.fact_vectors, np.memmap)


@pytest.mark.parametrize(("valid_at", "speculative"), COORDINATES)
def test_index_selection_equals_the_as_of_read(view, valid_at, speculative) -> None:
    query = QueryContext("q", 5, valid_at, speculative)
    with view.reading() as con:
        rows = facts_table_as_of(
            con, "sample", AsOf(valid_at, view.snapshot.recorded_cutoff)
        ).to_pylist()
    rows = [r for r in rows if speculative or r["stable"]]
    entities = view.entities.column("entity_id").to_pylist()
    position = {e: i for i, e in enumerate(entities)}
    expected = [
        r for r in rows if r["head_entity_id"] in position and r["tail_entity_id"] in position
    ]
    graph = graph_of(view, query)

    assert [f["fact_id"] for f in graph.facts] == [r["fact_id"] for r in expected]
    assert list(graph.facts) == expected, "every column of every fact row"
    assert graph.fact_head.tolist() == [position[r["head_entity_id"]] for r in expected]
    assert graph.fact_tail.tolist() == [position[r["tail_entity_id"]] for r in expected]
    segments = graph.segment_position
    support = np.zeros((len(expected), len(segments)))
    for i, row in enumerate(expected):
        support[i, [segments[s] for s in row["source_segment_ids"] if s in segments]] = 1
    assert np.array_equal(graph.fact_segments.toarray(), support)
    mentions = np.zeros((len(segments), len(entities)))
    for i, linked in enumerate(view.segments.column("entity_ids").to_pylist()):
        mentions[i, [position[e] for e in linked or [] if e in position]] = 1
    assert np.array_equal(graph.mentions.toarray(), mentions)
    stored = view.table("facts").to_arrow().select(["fact_id", "vector"]).to_pylist()
    vector_of = {r["fact_id"]: r["vector"] for r in stored}
    assert np.allclose(np.asarray(graph.fact_vectors), [vector_of[r["fact_id"]] for r in expected])

    by_segment: dict[str, list[dict]] = {}
    for row in rows:
        for segment in row["source_segment_ids"]:
            by_segment.setdefault(segment, []).append(row)
    for segment in segments:
        assert view.segment_facts(segment, query) == by_segment.get(segment, []), segment


def test_mapped_and_computed_indexes_answer_alike(graph_memory, view) -> None:
    computed = Memory(SnapshotView(view.snapshot, view.connect, view.db))
    assert not isinstance(computed._view.graph_index.fact_vectors, np.memmap)
    for strategy in STRATEGY_NAMES:
        for text, at in [
            ("Who is the CEO of Acme?", None),
            ("Where did Priya work in 2021?", datetime(2021, 6, 1, tzinfo=UTC)),
        ]:
            mapped = graph_memory.query(text, strategy=strategy, k=5, valid_at=at)
            again = computed.query(text, strategy=strategy, k=5, valid_at=at)
            assert [dataclasses.astuple(h) for h in mapped] == [
                dataclasses.astuple(h) for h in again
            ], strategy
