"""`stores.graph_index`: an index is written whole or not at all, never rewritten, and read
back memory-mapped with every array and matrix as written."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from stores.graph_index import (
    LIST_PARTS,
    MANIFEST,
    is_complete,
    read_graph_index,
    write_graph_index,
)
from transforms.graph_index import GraphIndex, build_graph_index
from transforms.vector_lists import EXACT_BELOW


def _index(n_facts: int = 2, search_text: list[str] | None = None) -> GraphIndex:
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
    if search_text is not None:
        segments = segments.append_column("search_text", pa.array(search_text))
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


def test_a_large_index_writes_its_vector_lists_and_maps_them(tmp_path) -> None:
    """At `EXACT_BELOW` facts the write builds the facts' IVF index and the read maps it;
    the entities (2) stay below the threshold and have none."""
    index = _index(EXACT_BELOW)
    assert index.fact_lists is None, "built with the index's write, not with the index"
    assert write_graph_index(tmp_path / "snap-1", index, "snap-1")
    for part in LIST_PARTS:
        assert (tmp_path / "snap-1" / f"fact_lists_{part}.npy").is_file(), part
        assert not (tmp_path / "snap-1" / f"entity_lists_{part}.npy").exists(), part
    read = read_graph_index(tmp_path / "snap-1")
    assert read is not None and read.fact_lists is not None and read.entity_lists is None
    assert isinstance(read.fact_lists.vectors, np.memmap)
    assert np.array_equal(read.fact_lists.vectors, index.fact_vectors[read.fact_lists.order])
    assert read.fact_lists.offsets[-1] == EXACT_BELOW


def test_an_index_without_vector_lists_opens_without_them(tmp_path) -> None:
    """A small index has no list files, and one written before them (files removed) still
    opens: its queries multiply every vector."""
    assert write_graph_index(tmp_path / "small", _index(2), "small")
    assert not list((tmp_path / "small").glob("*_lists_*.npy"))
    assert write_graph_index(tmp_path / "old", _index(EXACT_BELOW), "old")
    for path in (tmp_path / "old").glob("fact_lists_*.npy"):
        path.unlink()
    for name in ("small", "old"):
        read = read_graph_index(tmp_path / name)
        assert read is not None and read.fact_lists is None and read.entity_lists is None, name


def test_segment_postings_round_trip_and_are_optional(tmp_path) -> None:
    """The segments' postings (`GraphIndex.lexical`) are written and mapped back as built;
    an index without a search-text column has none, and one written before them (files
    removed) opens without them (LanceDB's full-text search answers then)."""
    from transforms.lexical import analyze, build_lexical_index

    assert _index().lexical is None, "segments without a search_text column"
    texts = ["Acme hires Priya", "Priya leads the firmware team"]
    index = _index(search_text=texts)
    expected = build_lexical_index(texts)
    assert list(index.lexical.terms) == expected.terms and "priya" in analyze(texts[0])
    assert write_graph_index(tmp_path / "snap-1", index, "snap-1")
    read = read_graph_index(tmp_path / "snap-1").lexical
    assert read is not None and list(read.terms) == list(expected.terms)
    assert isinstance(read.rows, np.memmap), "postings are mapped"
    for name in ("offsets", "rows", "counts", "lengths"):
        assert np.array_equal(getattr(read, name), getattr(expected, name)), name
    for path in (tmp_path / "snap-1").glob("lexical_*"):
        path.unlink()
    assert read_graph_index(tmp_path / "snap-1").lexical is None
