"""Reading the quarantine table: the records a build set aside (or kept with a warning), with
the file, record, stage and reason, for `kgmem quarantine`."""

from __future__ import annotations

from typing import Any

import duckdb

COLUMNS = ("collection", "stage", "source_file", "record_ref", "reason", "quarantined_at")


def quarantine_rows(
    con: duckdb.DuckDBPyConnection, collection: str | None = None
) -> list[dict[str, Any]]:
    """The quarantined records, of `collection` or of every collection, by collection,
    stage, file and record (the raw text left out: it may be large)."""
    return (
        con.sql(
            f"SELECT {', '.join(COLUMNS)} FROM quarantine WHERE ? IS NULL OR collection = ? "
            "ORDER BY collection, stage, source_file, record_ref",
            params=[collection, collection],
        )
        .to_arrow_table()
        .to_pylist()
    )
