"""What the evaluation assets share: a collection's benchmark registration and its newest
snapshot (the one the evaluation runs on)."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from dagster_project.resources import WarehouseResource

NEWEST_SNAPSHOT_SQL = (
    "SELECT snapshot_id FROM snapshots WHERE collection = ? ORDER BY created_at DESC LIMIT 1"
)


@dataclass(frozen=True)
class Registration:
    """`collection` is benchmark `kind` built from `dataset`, evaluated with `options`."""

    collection: str
    kind: str
    dataset: str
    options: dict[str, Any]

    @property
    def row(self) -> dict[str, Any]:
        return {"kind": self.kind, "dataset": self.dataset, "options": self.options}


def registered_benchmark(
    warehouse: WarehouseResource, collection: str, kinds: Collection[str]
) -> Registration | None:
    """The registration of `collection` if it is a benchmark of one of `kinds`, else None."""
    rows = warehouse.rows(
        "SELECT kind, dataset, options FROM benchmarks WHERE collection = ? "
        "AND list_contains(?, kind)",
        [collection, list(kinds)],
    )
    if not rows:
        return None
    row = rows[0]
    return Registration(collection, row["kind"], row["dataset"], json.loads(row["options"]))


def newest_snapshot(warehouse: WarehouseResource, collection: str) -> str:
    """Id of the newest snapshot of `collection`."""
    rows = warehouse.rows(NEWEST_SNAPSHOT_SQL, [collection])
    if not rows:
        raise LookupError(f"collection {collection!r} has no snapshot; build it first")
    return rows[0]["snapshot_id"]
