"""`transforms.graph_index`: the columns and CSR matrices of a snapshot's graph, and the
vectorised as-of masks that pick a query's facts from them."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pyarrow as pa
import pytest

from transforms.graph_index import OPEN_END, OPEN_START, build_graph_index, fact_mask, microseconds

DAY = datetime(2022, 3, 1, tzinfo=UTC)


def _facts() -> pa.Table:
    return pa.table(
        {
            "fact_id": ["f1", "f2", "f3"],
            "head_entity_id": ["a", "b", "a"],
            "tail_entity_id": ["b", "c", "zz"],
            "head_name": ["A", "B", "A"],
            "relation": ["works_at", "located_in", "knows"],
            "tail_name": ["B", "C", "Z"],
            "confidence": [0.9, 0.5, 0.95],
            "stable": [True, False, True],
            "valid_from": pa.array([None, DAY, DAY], pa.timestamp("us", tz="UTC")),
            "valid_to": pa.array([DAY, None, None], pa.timestamp("us", tz="UTC")),
            "source_segment_ids": [["s1", "s1"], ["s2", "gone"], []],
        }
    )


def _index(embedded: list[list[str]]):
    entities = pa.table({"entity_id": ["a", "b", "c"], "name": ["A", "B", "C"]})
    segments = pa.table(
        {
            "segment_id": ["s1", "s2"],
            "entity_ids": [["a", "b", "a"], ["x"]],
            "node_ids": [["topic:t", "phrase:p"], ["phrase:p", None]],
            "next_segment_id": ["s2", None],
            "vector": pa.array([[1.0, 0.0], [0.6, 0.8]], pa.list_(pa.float32(), 2)),
        }
    )
    stored = (pa.array(["f2", "f1"]), np.array([[0.0, 1.0], [1.0, 0.0]], np.float32))

    def embed(texts: list[str]) -> np.ndarray:
        embedded.append(texts)
        return np.full((len(texts), 2), 0.5, np.float32)

    return build_graph_index(entities, segments, _facts(), stored, embed)


def test_fact_ends_are_entity_positions_with_minus_one_for_strangers() -> None:
    index = _index([])
    assert index.fact_head.tolist() == [0, 1, 0]
    assert index.fact_tail.tolist() == [1, 2, -1]
    assert index.in_graph.tolist() == [True, True, False]


def test_links_are_deduplicated_and_unknown_ids_dropped() -> None:
    index = _index([])
    assert index.mentions.toarray().tolist() == [[1, 1, 0], [0, 0, 0]]
    assert index.fact_segments.toarray().tolist() == [[1, 0], [0, 1], [0, 0]]


def test_passage_nodes_are_mentioned_entities_and_linked_nodes() -> None:
    index = _index([])
    assert index.node_ids.to_pylist() == ["a", "b", "x", "topic:t", "phrase:p"]
    assert index.segment_nodes.toarray().tolist() == [[1, 1, 0, 1, 1], [0, 0, 1, 0, 1]]
    assert index.entity_node.tolist() == [0, 1, -1], "c is mentioned nowhere"
    assert index.next_segment.tolist() == [1, -1]
    assert index.segment_vectors.tolist() == [[1.0, 0.0], [np.float32(0.6), np.float32(0.8)]]


def test_stored_vectors_are_reused_and_only_missing_statements_embedded() -> None:
    embedded: list[list[str]] = []
    index = _index(embedded)
    assert index.fact_vectors.tolist() == [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]
    assert embedded == [["A knows Z"]]


def test_open_interval_ends_are_the_int64_extremes() -> None:
    index = _index([])
    assert index.fact_valid_from.tolist() == [OPEN_START, microseconds(DAY), microseconds(DAY)]
    assert index.fact_valid_to.tolist() == [microseconds(DAY), OPEN_END, OPEN_END]


@pytest.mark.parametrize(
    ("valid_at", "speculative", "expected"),
    [
        (None, False, [True, False, True]),
        (None, True, [True, True, True]),
        (datetime(2022, 2, 28, tzinfo=UTC), True, [True, False, False]),
        (DAY, True, [False, True, True]),  # valid_to is exclusive, valid_from inclusive
        (datetime(2022, 3, 1), False, [False, False, True]),  # naive is UTC
    ],
)
def test_fact_mask_follows_the_as_of_semantics(valid_at, speculative, expected) -> None:
    assert fact_mask(_index([]), valid_at, speculative).tolist() == expected


def test_microseconds_counts_from_the_epoch_in_utc() -> None:
    assert microseconds(datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=UTC)) == 1_000_005
    assert microseconds(datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)) == -1_000_000
