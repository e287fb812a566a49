"""Keeping a LanceDB table equal to the desired rows: empty collections, no-op re-syncs."""

import lancedb
import numpy as np
import pyarrow as pa

from schemas.tables import LANCE_FACTS
from stores.lance_tables import sync_table


def _embed(texts):
    return np.ones((len(texts), 4), dtype=np.float32) / 2.0


def _facts(*ids: str) -> pa.Table:
    rows = [
        {
            "fact_id": i,
            "head_entity_id": "e1",
            "head_name": "Acme",
            "relation": "locate_in",
            "tail_entity_id": "e2",
            "tail_name": f"City {i}",
            "statement": f"Acme locate in City {i}",
        }
        for i in ids
    ]
    return pa.Table.from_pylist(rows, schema=LANCE_FACTS)


def test_sync_creates_an_empty_table_then_adds_changes_and_deletes(tmp_path):
    db = lancedb.connect(str(tmp_path))
    sync = dict(
        key="fact_id",
        embedders={"vector": _embed},
        embed_column="statement",
        fts_column="statement",
    )
    empty = sync_table(db, "facts", _facts(), **sync)
    assert (empty.added, empty.deleted) == (0, 0)
    assert db.open_table("facts").count_rows() == 0
    added = sync_table(db, "facts", _facts("a1", "b2"), **sync)
    assert added.added == 2
    again = sync_table(db, "facts", _facts("a1", "b2"), **sync)
    assert (again.added, again.deleted, again.version) == (0, 0, added.version)
    changed = sync_table(db, "facts", _facts("b2", "c3"), **sync)
    assert (changed.added, changed.deleted) == (1, 1)
    ids = sorted(db.open_table("facts").to_arrow().column("fact_id").to_pylist())
    assert ids == ["b2", "c3"]


def test_a_changed_set_of_vector_columns_rewrites_rows_and_keeps_old_versions(tmp_path):
    db = lancedb.connect(str(tmp_path))
    sync = dict(key="fact_id", embed_column="statement", fts_column="statement")
    first = sync_table(db, "facts", _facts("a1", "b2"), embedders={"vector": _embed}, **sync)
    both = {"vector": _embed, "vector_fusion": lambda texts: np.zeros((len(texts), 2), np.float32)}
    second = sync_table(db, "facts", _facts("a1", "b2"), embedders=both, **sync)
    assert (second.added, second.deleted) == (2, 2)
    table = db.open_table("facts")
    assert table.schema.field("vector_fusion").type.list_size == 2
    assert table.to_arrow().column("vector_fusion").null_count == 0
    again = sync_table(db, "facts", _facts("a1", "b2"), embedders=both, **sync)
    assert (again.added, again.deleted, again.version) == (0, 0, second.version)
    table.checkout(first.version)
    assert "vector_fusion" not in table.schema.names
    assert table.count_rows() == 2
    table.checkout_latest()
    off = sync_table(db, "facts", _facts("a1"), embedders={"vector": _embed}, **sync)
    assert (off.added, off.deleted) == (1, 2)
    assert "vector_fusion" not in db.open_table("facts").schema.names
