"""What the evaluations read and report: a collection's newest snapshot (the one an
evaluation scores) and the `evaluation_results` rows of a snapshot."""

from __future__ import annotations

from typing import Any

from stores.warehouse import WarehouseStore

NEWEST_SNAPSHOT_SQL = (
    "SELECT snapshot_id FROM snapshots WHERE collection = ? ORDER BY created_at DESC LIMIT 1"
)
RESULTS_SQL = """
SELECT strategy, metric, value, snapshot_id FROM evaluation_results
WHERE collection = ? AND snapshot_id = ? AND benchmark = ? ORDER BY strategy, metric
"""


def newest_snapshot(warehouse: WarehouseStore, collection: str) -> str:
    """Id of the newest snapshot of `collection`."""
    rows = warehouse.rows(NEWEST_SNAPSHOT_SQL, [collection])
    if not rows:
        raise LookupError(f"collection {collection!r} has no snapshot; build it first")
    return rows[0]["snapshot_id"]


def evaluation_rows(
    warehouse: WarehouseStore, collection: str, snapshot_id: str, benchmark: str
) -> list[dict[str, Any]]:
    """The (strategy, metric, value, snapshot_id) rows of one evaluation."""
    return warehouse.rows(RESULTS_SQL, [collection, snapshot_id, benchmark])
