"""LanceDB tables opened for reading at the version a snapshot pinned, their schema read
once.

LanceDB 0.40's query builder reads `table.schema` three times a search (its blob-column
checks), and each read is a round trip to LanceDB's background runtime that converts the
table's schema to Arrow again: 1.1 ms of a 5.7 ms vector search over the 403k segments of
the 1M-fact bench (`nearest_segments`, 40 queries, median), and a graph strategy runs
two or three searches a query. A checked-out version's schema cannot change, so a pinned
table reads it once. Only a local or object-store database (`LanceDBConnection`) opens
such a table; another kind (LanceDB Cloud) opens its own.
"""

from __future__ import annotations

import lancedb
import pyarrow as pa
from lancedb.db import LanceDBConnection
from lancedb.table import LanceTable


class PinnedLanceTable(LanceTable):
    """A `LanceTable` read at one checked-out version: its schema is read on first use and
    kept until the next `checkout`. For reading only; write through `db.open_table`."""

    _pinned_schema: pa.Schema | None = None

    @property
    def schema(self) -> pa.Schema:
        if self._pinned_schema is None:
            self._pinned_schema = super().schema
        return self._pinned_schema

    def checkout(self, version: int | str) -> None:
        self._pinned_schema = None
        super().checkout(version)


def open_pinned(db: lancedb.DBConnection, name: str, version: int) -> lancedb.table.Table:
    """Table `name` of `db` checked out at `version`, for reading."""
    table = (
        PinnedLanceTable.open(db, name)
        if isinstance(db, LanceDBConnection)
        else db.open_table(name)
    )
    table.checkout(version)
    return table


def has_vector_index(table: lancedb.table.Table, column: str) -> bool:
    """Whether `column` of `table` carries an index. A vector column can carry only a
    vector index, so any index on it counts; without one, LanceDB answers a search of the
    column by scanning every row."""
    return any(column in config.columns for config in table.list_indices())
