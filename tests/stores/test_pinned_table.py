"""A pinned LanceDB table reads its schema once per checked-out version and searches like
the table LanceDB opens itself."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.table import LanceTable

from stores.pinned_table import PinnedLanceTable, has_vector_index, open_pinned


@pytest.fixture
def two_versions(tmp_path: Path) -> tuple[lancedb.DBConnection, int, int]:
    """A table whose second version adds a column: (database, first, second version)."""
    db = lancedb.connect(str(tmp_path / "lance"))
    rng = np.random.default_rng(7)
    rows = pa.table(
        {
            "id": [f"s{i}" for i in range(40)],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(rng.standard_normal(40 * 8).astype(np.float32)), 8
            ),
        }
    )
    table = db.create_table("t", rows)
    first = table.version
    table.add_columns({"extra": "cast(1 as int)"})
    return db, first, table.version


def test_schema_is_read_once_per_checkout(
    two_versions: tuple[lancedb.DBConnection, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, first, second = two_versions
    reads: list[int] = []
    read_schema = LanceTable.schema.fget
    monkeypatch.setattr(
        LanceTable, "schema", property(lambda self: reads.append(1) or read_schema(self))
    )
    table = open_pinned(db, "t", first)
    assert isinstance(table, PinnedLanceTable)
    assert table.schema.names == ["id", "vector"]
    query = np.ones(8, np.float32)
    for _ in range(3):
        table.search(query).limit(5).to_arrow()
    assert len(reads) == 1
    table.checkout(second)
    assert table.schema.names == ["id", "vector", "extra"]
    assert len(reads) == 2


def test_searches_as_the_table_lancedb_opens(
    two_versions: tuple[lancedb.DBConnection, int, int],
) -> None:
    db, first, _ = two_versions
    plain = db.open_table("t")
    plain.checkout(first)
    query = np.linspace(-1, 1, 8).astype(np.float32)
    pinned = open_pinned(db, "t", first)
    expected = plain.search(query).select(["id", "_distance"]).limit(7).to_arrow()
    assert pinned.search(query).select(["id", "_distance"]).limit(7).to_arrow() == expected
    assert pinned.to_arrow() == plain.to_arrow()


def test_has_vector_index(two_versions: tuple[lancedb.DBConnection, int, int]) -> None:
    db, _, _ = two_versions
    table = db.open_table("t")
    assert not has_vector_index(table, "vector")
    table.create_index(vector_column_name="vector", index_type="IVF_FLAT", num_partitions=2)
    assert has_vector_index(table, "vector")
    assert not has_vector_index(table, "id")
