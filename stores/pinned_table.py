"""LanceDB tables opened for reading at the version a snapshot pinned, their schema read
once, and checked to be the version the snapshot pinned.

A version number names rows only while the table's history lasts: a table deleted and
built again starts its versions from 1, so a snapshot's pinned number can come to name
another build's rows (or none). A snapshot was recorded after every version it pins was
written, so `open_pinned` refuses a version written after the snapshot
(`PinnedVersionGone`) instead of reading rows the snapshot never saw. The check reads the
table's version list (~1 ms at 1M facts, three versions). Both times come from clocks of
the hosts that wrote them; a build writes its tables and records its snapshot from one
process.

LanceDB 0.40's query builder reads `table.schema` three times a search (its blob-column
checks), and each read is a round trip to LanceDB's background runtime that converts the
table's schema to Arrow again: 1.1 ms of a 5.7 ms vector search over the 403k segments of
the 1M-fact bench (`nearest_segments`, 40 queries, median), and a graph strategy runs
two or three searches a query. A checked-out version's schema cannot change, so a pinned
table reads it once. Only a local or object-store database (`LanceDBConnection`) opens
such a table; another kind (LanceDB Cloud) opens its own.
"""

from __future__ import annotations

from datetime import UTC, datetime

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


class PinnedVersionGone(ValueError):
    """A snapshot's pinned table version no longer holds the rows the snapshot pinned (a
    ValueError, as bad input: the CLI prints it as one line)."""


def open_pinned(
    db: lancedb.DBConnection, name: str, version: int, pinned_at: datetime | None = None
) -> lancedb.table.Table:
    """Table `name` of `db` checked out at `version`, for reading; with `pinned_at` (when
    the snapshot pinning it was recorded), only if that version was written by then."""
    table = (
        PinnedLanceTable.open(db, name)
        if isinstance(db, LanceDBConnection)
        else db.open_table(name)
    )
    if pinned_at is not None:
        check_pinned(table, name, version, pinned_at)
    table.checkout(version)
    return table


def check_pinned(table: lancedb.table.Table, name: str, version: int, pinned_at: datetime) -> None:
    """Raise `PinnedVersionGone` unless `version` of `table` exists and was written by
    `pinned_at`."""
    written = version_written_at(table, version)
    if written is None:
        raise PinnedVersionGone(
            f"table {name!r} has no version {version}, which a snapshot recorded at "
            f"{pinned_at.isoformat()} pins: the table was deleted or its old versions "
            "cleaned up; rebuild the collection to record a new snapshot"
        )
    if written > pinned_at:
        raise PinnedVersionGone(
            f"table {name!r} version {version} was written at {written.isoformat()}, after "
            f"the snapshot pinning it was recorded ({pinned_at.isoformat()}): the table was "
            "deleted and built again, so the snapshot's rows are gone; rebuild the "
            "collection to record a new snapshot"
        )


def version_written_at(table: lancedb.table.Table, version: int) -> datetime | None:
    """When `version` of `table` was committed (UTC), or None if it does not exist.
    LanceDB reports the commit time as a naive local time."""
    for entry in table.list_versions():
        if entry["version"] == version:
            written: datetime = entry["timestamp"]
            return written.astimezone(UTC) if written.tzinfo is None else written
    return None


def has_vector_index(table: lancedb.table.Table, column: str) -> bool:
    """Whether `column` of `table` carries an index. A vector column can carry only a
    vector index, so any index on it counts; without one, LanceDB answers a search of the
    column by scanning every row."""
    return any(column in config.columns for config in table.list_indices())
