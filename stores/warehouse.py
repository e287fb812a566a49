"""The warehouse operations every stage writes through: DuckDB reads and writes, ledgers,
quarantine, input fingerprints.

All writes of a stage go through here, so the rules hold everywhere: per-document tables
are replaced for exactly the documents a run processed, the quarantine of a stage reflects
its latest run, and every statement is parameterised (table names come from `schemas/`,
never from input).

`WarehouseStore` holds the operations over a workspace folder `root`; `Warehouse` is the
plain object (pipelines, benchmarks, scripts), and the Dagster resource
`dagster_project.resources.WarehouseResource` is the same operations with `root` as
resource config.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from stores.workspace import Workspace
from transforms.quarantine import QuarantineRecord

if TYPE_CHECKING:
    from schemas.ddl import TableDecl


class WarehouseStore:
    """Warehouse operations of the workspace folder `self.root`."""

    root: str

    @property
    def workspace(self) -> Workspace:
        return Workspace.at(self.root)

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        con = self.workspace.connect()
        try:
            yield con
        finally:
            con.close()

    def inputs_of(self, collection: str) -> list[str]:
        """The input paths registered for `collection` (by `kgmem build` or the sensor)."""
        with self.connect() as con:
            rows = con.execute(
                "SELECT inputs FROM collections WHERE name = ?", [collection]
            ).fetchall()
        if not rows:
            raise ValueError(
                f"collection {collection!r} is not registered; run "
                f"`kgmem build --collection {collection} --input PATH` first"
            )
        return list(json.loads(rows[0][0]))

    def register_collection(self, collection: str, inputs: Sequence[str]) -> None:
        with self.connect() as con:
            con.execute(
                "INSERT OR REPLACE INTO collections VALUES (?, ?, ?)",
                [collection, json.dumps(list(inputs)), datetime.now(UTC)],
            )

    def fetch(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> pa.Table:
        """Run a parameterised query (positional or named parameters) as an Arrow table."""
        with self.connect() as con:
            bound = params if isinstance(params, Mapping) else list(params)
            return con.sql(sql, params=bound).to_arrow_table()

    def rows(
        self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[dict[str, Any]]:
        return self.fetch(sql, params).to_pylist()

    def entity_of(self, collection: str) -> dict[str, str]:
        """Normalised mention key -> entity id (the `entity_same_as` links)."""
        rows = self.rows(
            "SELECT norm_key, entity_id FROM entity_same_as WHERE collection = ?", [collection]
        )
        return {r["norm_key"]: r["entity_id"] for r in rows}

    def ledger(self, collection: str, stage: str) -> set[str]:
        """Document ids that `stage` has already processed in `collection`."""
        rows = self.fetch(
            "SELECT doc_id FROM stage_ledger WHERE collection = ? AND stage = ?",
            [collection, stage],
        )
        return set(rows.column("doc_id").to_pylist())

    def replace_documents(
        self,
        table: str,
        collection: str,
        stage: str,
        doc_ids: Iterable[str],
        rows: pa.Table | list[dict[str, Any]],
        stale_doc_ids: Iterable[str] = (),
    ) -> None:
        """Replace the rows of `doc_ids` in `table` by `rows`, drop stale documents, and mark
        `doc_ids` processed by `stage` (one transaction)."""
        doc_ids, stale = sorted(set(doc_ids)), sorted(set(stale_doc_ids))
        touched = doc_ids + stale
        with self.connect() as con:
            con.execute("BEGIN")
            if touched:
                con.execute(
                    f"DELETE FROM {table} WHERE collection = ? AND list_contains(?, doc_id)",
                    [collection, touched],
                )
                con.execute(
                    "DELETE FROM stage_ledger WHERE collection = ? AND stage = ? "
                    "AND list_contains(?, doc_id)",
                    [collection, stage, touched],
                )
            _insert(con, table, rows)
            now = datetime.now(UTC)
            _insert(
                con,
                "stage_ledger",
                [
                    {"collection": collection, "stage": stage, "doc_id": d, "processed_at": now}
                    for d in doc_ids
                ],
            )
            con.execute("COMMIT")

    def replace_collection(self, table: str, collection: str, rows: list[dict[str, Any]]) -> None:
        """Replace every row of `collection` in `table` (corpus-wide derived tables)."""
        with self.connect() as con:
            con.execute("BEGIN")
            con.execute(f"DELETE FROM {table} WHERE collection = ?", [collection])
            _insert(con, table, rows)
            con.execute("COMMIT")

    def replace_where(self, table: str, key: Mapping[str, Any], rows: list[dict[str, Any]]) -> None:
        """Replace the rows of `table` matching every column = value of `key` by `rows`."""
        condition = " AND ".join(f"{column} = ?" for column in key)
        with self.connect() as con:
            con.execute("BEGIN")
            con.execute(f"DELETE FROM {table} WHERE {condition}", list(key.values()))
            _insert(con, table, rows)
            con.execute("COMMIT")

    def apply_changes(
        self, collection: str, changes: Sequence[TableChange], record: StageRecord | None = None
    ) -> None:
        """Apply `changes` to the rows of `collection` in several tables, and `record` the
        stage's new input fingerprint, in one transaction: tables that must agree (a stage's
        outputs and the index they were made from) never part. A `record` whose stage state
        changed since it was read (another run wrote in between) rolls everything back
        with StaleStageState."""
        from schemas.warehouse import TABLE

        with self.connect() as con:
            con.execute("BEGIN")
            try:
                if record is not None and record.checked:
                    now = _stage_fingerprint(con, collection, record.stage)
                    if now != record.read:
                        raise StaleStageState(
                            f"stage {record.stage} of {collection!r}: another run recorded "
                            "its state since this run read it"
                        )
                for change in changes:
                    _apply(con, collection, change, TABLE[change.table])
                if record is not None:
                    _record_fingerprint(con, collection, record.stage, record.fingerprint)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def append(self, table: str, rows: list[dict[str, Any]]) -> None:
        with self.connect() as con:
            _insert(con, table, rows)

    def set_quarantine(
        self, collection: str, stage: str, records: Iterable[QuarantineRecord]
    ) -> int:
        """Make `records` the quarantine of (collection, stage); return how many there are."""
        now = datetime.now(UTC)
        unique = {
            (r.source_file, r.record_ref, r.reason): {**r.as_row(collection), "quarantined_at": now}
            for r in records
        }
        with self.connect() as con:
            con.execute("BEGIN")
            con.execute(
                "DELETE FROM quarantine WHERE collection = ? AND stage = ?", [collection, stage]
            )
            _insert(con, "quarantine", list(unique.values()))
            con.execute("COMMIT")
        return len(unique)

    def replace_document_quarantine(
        self, collection: str, stage: str, rows: list[dict[str, Any]], doc_ids: Sequence[str]
    ) -> int:
        """Replace the quarantine of `doc_ids` (rows naming the document as `source_file`) for
        an incremental stage; return the stage's quarantine count for the collection."""
        now = datetime.now(UTC)
        unique = {(r["source_file"], r["record_ref"], r["reason"]): r for r in rows}
        with self.connect() as con:
            con.execute("BEGIN")
            con.execute(
                "DELETE FROM quarantine WHERE collection = ? AND stage = ? "
                "AND list_contains(?, source_file)",
                [collection, stage, list(doc_ids)],
            )
            _insert(con, "quarantine", [{**r, "quarantined_at": now} for r in unique.values()])
            con.execute("COMMIT")
            count = con.execute(
                "SELECT count(*) FROM quarantine WHERE collection = ? AND stage = ?",
                [collection, stage],
            ).fetchall()
        return int(count[0][0])

    def stage_fingerprint(self, collection: str, stage: str) -> str | None:
        """The input fingerprint `stage` last recorded for `collection` (None: never ran)."""
        with self.connect() as con:
            return _stage_fingerprint(con, collection, stage)

    def fingerprint_unchanged(self, collection: str, stage: str, fingerprint: str) -> bool:
        return self.stage_fingerprint(collection, stage) == fingerprint

    def record_fingerprint(self, collection: str, stage: str, fingerprint: str) -> None:
        with self.connect() as con:
            _record_fingerprint(con, collection, stage, fingerprint)


@dataclass(frozen=True)
class TableChange:
    """A change to one collection's rows of a declared table: remove the rows whose key
    (the table's key columns but `collection`) is in `removed`, or every row (`replace`),
    then insert `inserted`. A changed row is removed and inserted."""

    table: str
    removed: list[dict[str, Any]] = field(default_factory=list)
    inserted: list[dict[str, Any]] = field(default_factory=list)
    replace: bool = False


@dataclass(frozen=True)
class StageRecord:
    """The input fingerprint a corpus-wide stage records with its writes. `read` is the
    fingerprint recorded when the run read its inputs (None: none was); with `checked`,
    the writes are refused if another run has recorded a different one since."""

    stage: str
    fingerprint: str
    read: str | None
    checked: bool = True


class StaleStageState(RuntimeError):
    """Another run of the stage recorded its state between this run's read and write."""


@dataclass(frozen=True)
class Warehouse(WarehouseStore):
    """The warehouse operations of one workspace folder, outside Dagster."""

    root: str


def _stage_fingerprint(con: duckdb.DuckDBPyConnection, collection: str, stage: str) -> str | None:
    rows = con.execute(
        "SELECT input_fingerprint FROM stage_state WHERE collection = ? AND stage = ?",
        [collection, stage],
    ).fetchall()
    return rows[0][0] if rows else None


def _record_fingerprint(
    con: duckdb.DuckDBPyConnection, collection: str, stage: str, fingerprint: str
) -> None:
    con.execute(
        "INSERT OR REPLACE INTO stage_state VALUES (?, ?, ?, ?)",
        [collection, stage, fingerprint, datetime.now(UTC)],
    )


def _apply(
    con: duckdb.DuckDBPyConnection, collection: str, change: TableChange, table: TableDecl
) -> None:
    """One `TableChange` inside the caller's transaction: delete, then insert."""
    if change.replace:
        con.execute(f"DELETE FROM {table.name} WHERE collection = ?", [collection])
    elif change.removed:
        columns = [c for c in table.key if c != "collection"]
        named = {name for row in change.removed for name in row}
        if named != set(columns):
            raise ValueError(
                f"rows removed from {table.name} are named by {columns}, got {sorted(named)}"
            )
        con.register("removed_keys", pa.Table.from_pylist(change.removed))
        try:
            match = " AND ".join(f"{table.name}.{c} = removed_keys.{c}" for c in columns)
            con.execute(
                f"DELETE FROM {table.name} USING removed_keys "
                f"WHERE {table.name}.collection = ? AND {match}",
                [collection],
            )
        finally:
            con.unregister("removed_keys")
    _insert(con, table.name, pa.Table.from_pylist(change.inserted, schema=table.schema))


def _insert(
    con: duckdb.DuckDBPyConnection, table: str, rows: pa.Table | list[dict[str, Any]]
) -> None:
    arrow = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows)
    if arrow.num_rows == 0:
        return
    con.register("incoming_rows", arrow)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
    finally:
        con.unregister("incoming_rows")
