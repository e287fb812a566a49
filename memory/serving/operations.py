"""What the server answers, one function per operation, shared by the HTTP API and the
MCP tools; each answer names the snapshot that gave it (`snapshot_id`).

Queries and entities are answered from the leased snapshot's open view (no warehouse
connection); fact histories read the warehouse on one short read-only connection, as
of the snapshot's recorded cutoff at the latest, and wait at most `LOCK_WAIT_S` for a
build holding the file (`WarehouseBusy` then, which the server answers with 503)."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

import duckdb

from memory.answers import entity_facts, plain, query_record, snapshot_records
from memory.serving.pool import SnapshotPool, UnknownSnapshot
from memory.serving.requests import EntityRequest, FactsRequest, QueryRequest
from stores.fact_queries import AsOf
from transforms.duckdb_connect import connect_waiting

LOCK_WAIT_S = 10.0
"""How long a fact request waits for a build that holds the warehouse's lock."""


class WarehouseBusy(RuntimeError):
    """A build held the warehouse longer than a request may wait."""


def search(pool: SnapshotPool, request: QueryRequest) -> dict[str, Any]:
    """`Memory.query`'s result as `kgmem query --json` prints it (the explanation only
    with `explain`)."""
    with pool.lease(snapshot_name(pool, request.snapshot, request.known_at)) as memory:
        result = query_record(
            memory.snapshot.collection,
            memory.query(
                request.text,
                strategy=request.strategy,
                k=request.k,
                valid_at=request.valid_at,
                unit=request.unit,
                options=request.options,
            ),
        )
    if not request.explain:
        del result["explanation"]
    return result


def facts(pool: SnapshotPool, request: FactsRequest) -> dict[str, Any]:
    """The entity's fact versions as `kgmem facts --json` lists them, as of the request's
    times and never past the snapshot's recorded cutoff."""
    with pool.lease(snapshot_name(pool, request.snapshot, request.known_at)) as memory:
        snapshot = memory.snapshot
    cutoff = snapshot.recorded_cutoff
    known_at = min(request.known_at, cutoff) if request.known_at else cutoff
    try:
        con = connect_waiting(pool.workspace.warehouse_path, read_only=True, timeout_s=LOCK_WAIT_S)
    except duckdb.IOException as exc:
        raise WarehouseBusy(f"the warehouse is busy (a build is writing it): {exc}") from None
    with contextlib.closing(con):
        rows = entity_facts(
            con,
            snapshot.collection,
            request.entity,
            AsOf(request.valid_at, known_at),
            request.relation,
            request.stable_only,
        )
    return {
        "snapshot_id": snapshot.snapshot_id,
        "collection": snapshot.collection,
        "entity": request.entity,
        "known_at": known_at.isoformat(),
        "facts": plain(rows),
    }


def entity(pool: SnapshotPool, request: EntityRequest) -> dict[str, Any]:
    """The snapshot's entity whose name or alias is `request.name`: id, name, type and
    aliases; a LookupError if there is none."""
    with pool.lease(request.snapshot) as memory:
        record = memory.entity(request.name)
        snapshot_id = memory.snapshot.snapshot_id
    if record is None:
        raise LookupError(f"no entity named {request.name!r} in snapshot {snapshot_id}")
    return {"snapshot_id": snapshot_id, "entity": record}


def snapshots(pool: SnapshotPool) -> dict[str, Any]:
    """The workspace's snapshots, newest first, and which ones the server serves."""
    return {
        "snapshot_id": pool.default_id,
        "latest": pool.latest,
        "pinned": pool.pinned,
        "snapshots": snapshot_records(pool.snapshots()),
    }


def health(pool: SnapshotPool) -> dict[str, Any]:
    return {"status": "ok", "snapshot_id": pool.default_id, "latest": pool.latest}


def snapshot_name(pool: SnapshotPool, name: str | None, known_at: datetime | None) -> str | None:
    """The snapshot a request is answered from: the one it names, else with `known_at`
    the newest recorded at or before then, else the server's."""
    if name is not None or known_at is None:
        return name
    for snapshot in pool.snapshots():
        if snapshot.recorded_cutoff <= known_at:
            return snapshot.snapshot_id
    raise UnknownSnapshot(f"no snapshot was recorded at or before known_at {known_at.isoformat()}")
