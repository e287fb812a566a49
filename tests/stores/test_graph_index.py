"""`stores.graph_index`: an index is written whole or not at all, never rewritten, and read
back memory-mapped with every array and matrix as written."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from stores.graph_index import MANIFEST, is_complete, read_graph_index, write_graph_index
from transforms.graph_index import GraphIndex, build_graph_index


def _index(n_facts: int = 2) -> GraphIndex:
    ids = [f"f{i}" for i in range(n_facts)]
    facts = pa.table(
        {
            "fact_id": ids,
            "head_entity_id": ["a"] * n_facts,
            "tail_entity_id": ["b"] * n_facts,
            "head_name": ["A"] * n_facts,
            "relation": ["knows"] * n_facts,
            "tail_name": ["B"] * n_facts,
            "confidence": [0.9] * n_facts,
            "stable": [True] * n_facts,
            "valid_from": pa.nulls(n_facts, pa.timestamp("us", tz="UTC")),
            "valid_to": pa.nulls(n_facts, pa.timestamp("us", tz="UTC")),
            "source_segment_ids": [["s1"]] * n_facts,
        }
    )
    entities = pa.table({"entity_id": ["a", "b"], "name": ["A", "B"]})
    segments = pa.table({"segment_id": ["s1", "s2"], "entity_ids": [["a"], ["b", "a"]]})
    vectors = np.arange(n_facts * 3, dtype=np.float32).reshape(n_facts, 3)
    return build_graph_index(entities, segments, facts, (pa.array(ids), vectors), lambda t: t)


def test_round_trip_maps_what_was_written(tmp_path) -> None:
    index = _index()
    assert write_graph_index(tmp_path / "snap-1", index, "snap-1")
    read = read_graph_index(tmp_path / "snap-1")
    assert read is not None
    assert isinstance(read.fact_vectors, np.memmap), "arrays are mapped, not loaded"
    arrays = ("fact_head", "fact_tail", "fact_confidence", "fact_stable", "fact_vectors")
    for name in (*arrays, "entity_node", "next_segment", "segment_vectors"):
        assert np.array_equal(getattr(read, name), getattr(index, name)), name
    for name in ("mentions", "fact_segments", "segment_nodes"):
        assert (getattr(read, name) != getattr(index, name)).nnz == 0, name
        assert getattr(read, name).shape == getattr(index, name).shape
    assert read.facts.equals(index.facts) and read.node_ids.equals(index.node_ids)
    assert read.entity_ids.to_pylist() == ["a", "b"] and read.segment_ids.to_pylist() == [
        "s1",
        "s2",
    ]
    manifest = json.loads((tmp_path / "snap-1" / MANIFEST).read_text())
    assert manifest["facts"] == 2 and manifest["snapshot_id"] == "snap-1"


def test_an_index_is_never_rewritten(tmp_path) -> None:
    assert write_graph_index(tmp_path / "snap-1", _index(2), "snap-1")
    assert not write_graph_index(tmp_path / "snap-1", _index(5), "snap-1")
    read = read_graph_index(tmp_path / "snap-1")
    assert read is not None and read.n_facts == 2
    assert not list(tmp_path.glob(".*tmp")), "no staging folder is left behind"


def test_a_folder_without_its_manifest_is_incomplete_and_replaced(tmp_path) -> None:
    partial = tmp_path / "snap-1"
    partial.mkdir()
    (partial / "fact_head.npy").write_bytes(b"half")
    assert not is_complete(partial) and read_graph_index(partial) is None
    assert read_graph_index(tmp_path / "absent") is None
    assert write_graph_index(partial, _index(3), "snap-1")
    read = read_graph_index(partial)
    assert read is not None and read.n_facts == 3


def test_staging_left_by_a_dead_writer_is_removed(tmp_path) -> None:
    dead = tmp_path / ".snap-1.999999999.tmp"
    dead.mkdir()
    assert write_graph_index(tmp_path / "snap-1", _index(), "snap-1")
    assert not dead.exists()
