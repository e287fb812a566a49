"""Keeping a LanceDB table equal to the desired rows: empty collections, no-op re-syncs."""

import lancedb
import numpy as np
import pyarrow as pa

from memory.lance_tables import sync_table
from schemas.tables import LANCE_FACTS


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
    sync = dict(key="fact_id", embed=_embed, embed_column="statement", fts_column="statement")
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
