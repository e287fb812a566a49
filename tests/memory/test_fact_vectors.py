"""`FactVectors`: one matrix of statement vectors with an id index, extended in place of a
per-fact dict (the graph embeds facts a snapshot's table lacks once, then reads them back)."""

from __future__ import annotations

import numpy as np

from memory.snapshot_view import FactVectors


def test_rows_follow_the_requested_order() -> None:
    vectors = FactVectors({"a": 0, "b": 1}, np.array([[1, 0], [0, 1]], np.float32))
    assert vectors.rows(["b", "a", "b"]).tolist() == [[0, 1], [1, 0], [0, 1]]


def test_extended_appends_new_ids_after_the_stored_ones() -> None:
    vectors = FactVectors({"a": 0}, np.array([[1, 0]], np.float32))
    grown = vectors.extended(["b", "c"], np.array([[0, 1], [1, 1]], np.float64))
    assert grown.index == {"a": 0, "b": 1, "c": 2} and grown.matrix.dtype == np.float32
    assert grown.rows(["c", "a"]).tolist() == [[1, 1], [1, 0]]
    assert vectors.index == {"a": 0}, "the original is left as it was"


def test_an_empty_table_is_extended_by_the_embedded_facts() -> None:
    empty = FactVectors({}, np.zeros((0, 0), np.float32))
    grown = empty.extended(["x"], np.array([[0.6, 0.8]], np.float32))
    assert grown.rows(["x"]).tolist() == [[np.float32(0.6), np.float32(0.8)]]
