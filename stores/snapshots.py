"""Immutable memory snapshots: what they pin, how their content hash is computed, listing.

A snapshot pins the DuckDB recorded-time cutoff (fact versions recorded later are
invisible to it) and the LanceDB table versions of its collection's segments, entities,
entity contexts, facts and structural bank. Its id derives from its content hash, so a
rebuild that changed nothing maps to the same snapshot rather than minting a new one;
unless a table that snapshot pins was deleted and built again since (its pinned version
gone, or written after the snapshot: `pins_intact`), and then the rebuild records a new
snapshot, whose id also derives from its time, rather than answer with the old one's
lost rows.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import lancedb

from stores.pinned_table import check_pinned
from stores.workspace import lance_table_name

LANCE_KINDS = {
    "segments": ("segment_id", ("search_text", "entity_ids", "node_ids", "next_segment_id")),
    "entities": ("entity_id", ("description",)),
    "facts": ("fact_id", ("statement",)),
    "contexts": ("entity_id", ("contexts",)),
    "structure": ("entity_id", ("graph_hash",)),
    "links": ("link_id", ("head_id", "tail_id", "kind", "weight")),
}
"""LanceDB tables a snapshot pins: kind -> (key column, content columns hashed). A segment's
links (its entities, structural and phrase nodes, next turn) are content too: a rebuild
that changes only them makes a new snapshot. Columns a table lacks (built before they
existed) are left out."""
OPTIONAL_KINDS = frozenset({"contexts", "structure", "links"})
"""Kinds whose table may be missing (a workspace built before it existed, or with no
entities): left out of the snapshot and of its hash, so older hashes stay valid."""


@dataclass(frozen=True)
class Snapshot:
    """One row of the `snapshots` table, decoded."""

    snapshot_id: str
    collection: str
    content_hash: str
    created_at: datetime
    recorded_cutoff: datetime
    lance_versions: dict[str, int]
    source_partitions: list[str]
    embedding_model: str
    counts: dict[str, int]
    retrieval: dict[str, Any] = field(default_factory=dict)
    """Retrieval settings pinned with the snapshot: the second (fusion) encoder of the
    segments, and the `hybrid` weights per corpus kind with their source; empty for a
    snapshot recorded before they were pinned."""

    @property
    def fusion_encoder(self) -> str | None:
        return self.retrieval.get("fusion_encoder")

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Snapshot:
        return cls(
            snapshot_id=row["snapshot_id"],
            collection=row["collection"],
            content_hash=row["content_hash"],
            created_at=row["created_at"],
            recorded_cutoff=row["recorded_cutoff"],
            lance_versions=json.loads(row["lance_versions"]),
            source_partitions=json.loads(row["source_partitions"]),
            embedding_model=row["embedding_model"],
            counts=json.loads(row["counts"]),
            retrieval=json.loads(row.get("retrieval") or "{}"),
        )


def content_hash(
    con: duckdb.DuckDBPyConnection,
    db: lancedb.DBConnection,
    collection: str,
    embedding_model: str,
    retrieval: dict[str, Any] | None = None,
) -> tuple[str, dict[str, int], dict[str, int]]:
    """(hash, lance table versions, row counts) of the collection's current memory and
    the retrieval settings pinned with it (left out of the hash when empty, so older
    hashes stay valid)."""
    digest = hashlib.sha256(embedding_model.encode())
    if retrieval:
        digest.update(json.dumps(retrieval, sort_keys=True).encode())
    versions, counts = {}, {}
    for kind, (key, contents) in LANCE_KINDS.items():
        try:
            table = db.open_table(lance_table_name(collection, kind))
        except ValueError:  # LanceDB: "Table ... was not found"
            if kind in OPTIONAL_KINDS:
                continue
            raise
        present = [c for c in contents if c in table.schema.names]
        rows = sorted(table.to_arrow().select([key, *present]).to_pylist(), key=lambda r: r[key])
        digest.update(json.dumps(rows, ensure_ascii=False).encode())
        versions[kind], counts[kind] = table.version, len(rows)
    facts = con.execute(
        "SELECT version_id FROM fact_versions WHERE collection = ? ORDER BY version_id",
        [collection],
    ).fetchall()
    digest.update(json.dumps([f[0] for f in facts]).encode())
    counts["fact_versions"] = len(facts)
    return digest.hexdigest(), versions, counts


def record_snapshot(
    con: duckdb.DuckDBPyConnection,
    db: lancedb.DBConnection,
    collection: str,
    embedding_model: str,
    retrieval: dict[str, Any] | None = None,
) -> tuple[Snapshot, bool]:
    """The snapshot of the collection's current memory with its `retrieval` settings,
    and whether it was newly created."""
    digest, versions, counts = content_hash(con, db, collection, embedding_model, retrieval)
    existing = (
        con.sql(
            "SELECT * FROM snapshots WHERE collection = ? AND content_hash = ? "
            "ORDER BY created_at DESC",
            params=[collection, digest],
        )
        .to_arrow_table()
        .to_pylist()
    )
    for snapshot in map(Snapshot.from_row, existing):
        if pins_intact(db, snapshot):
            return snapshot, False
    now = datetime.now(UTC)
    row = {
        "snapshot_id": snapshot_id(digest, now if existing else None),
        "collection": collection,
        "content_hash": digest,
        "created_at": now,
        "recorded_cutoff": now,
        "lance_versions": json.dumps(versions),
        "source_partitions": json.dumps([collection]),
        "embedding_model": embedding_model,
        "counts": json.dumps(counts),
        "retrieval": json.dumps(retrieval or {}, sort_keys=True),
    }
    con.execute(
        "INSERT INTO snapshots (snapshot_id, collection, content_hash, created_at, "
        "recorded_cutoff, lance_versions, source_partitions, embedding_model, counts, "
        "retrieval) VALUES ($snapshot_id, $collection, $content_hash, $created_at, "
        "$recorded_cutoff, $lance_versions, $source_partitions, $embedding_model, $counts, "
        "$retrieval)",
        row,
    )
    return Snapshot.from_row(row), True


def snapshot_id(digest: str, remade_at: datetime | None = None) -> str:
    """The id of a snapshot of content hash `digest`: its first 12 hex digits, or, for a
    snapshot recorded again because the tables of the first one were rebuilt
    (`remade_at`), those of the hash of the digest and that time."""
    if remade_at is None:
        return f"snap-{digest[:12]}"
    return f"snap-{hashlib.sha256(f'{digest}@{remade_at.isoformat()}'.encode()).hexdigest()[:12]}"


def pins_intact(db: lancedb.DBConnection, snapshot: Snapshot) -> bool:
    """Whether every table version the snapshot pins still holds the rows it pinned
    (`stores.pinned_table.check_pinned`)."""
    for kind, version in snapshot.lance_versions.items():
        name = lance_table_name(snapshot.collection, kind)
        try:
            check_pinned(db.open_table(name), name, version, snapshot.created_at)
        except ValueError:  # PinnedVersionGone, or LanceDB's "Table ... was not found"
            return False
    return True


def list_snapshots(con: duckdb.DuckDBPyConnection, collection: str | None = None) -> list[Snapshot]:
    """Snapshots, newest first, optionally of one collection."""
    rows = (
        con.sql(
            "SELECT * FROM snapshots WHERE ? IS NULL OR collection = ? ORDER BY created_at DESC",
            params=[collection, collection],
        )
        .to_arrow_table()
        .to_pylist()
    )
    return [Snapshot.from_row(r) for r in rows]


def reader_collection(snapshots: list[Snapshot], collection: str | None, home: object) -> str:
    """The collection a reader (`kgmem query`, `kgmem facts`, `Memory.open`) answers from:
    `collection` when given, else the one collection of the workspace's `snapshots`. A
    workspace holding several (a second corpus, the one `kgmem eval` builds) makes that a
    LookupError listing them: answering from the newest snapshot of any collection would
    silently switch corpora. A LookupError too when there is no snapshot."""
    if collection:
        return collection
    names = sorted({s.collection for s in snapshots})
    if not names:
        raise LookupError(f"no snapshot in workspace {home}; run `kgmem build` first")
    if len(names) > 1:
        raise LookupError(
            f"workspace {home} holds {len(names)} collections ({', '.join(names)}); "
            "name one with --collection"
        )
    return names[0]
