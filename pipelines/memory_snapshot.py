"""Stage 8, `memory_snapshot`: pin the collection's memory as an immutable, addressable
snapshot: the DuckDB recorded-time cutoff, the LanceDB table versions and the retrieval
settings (second encoder, `hybrid` weights and brevity prior per corpus kind, each graph
strategy's blend with the flat ranking per corpus kind, `stores.snapshots`). A rebuild
with unchanged content and settings returns the existing snapshot.
"""

from __future__ import annotations

from pipelines.outcome import StageOutcome
from pipelines.settings import BuildSettings
from stores.snapshots import record_snapshot
from stores.warehouse import WarehouseStore
from transforms.brevity_prior import pinned_brevity
from transforms.hybrid_weights import pinned_weights
from transforms.traversal_blend import pinned_blend

STAGE = "memory_snapshot"


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Record (or find) the snapshot of the collection's current memory."""
    retrieval = {
        "fusion_encoder": settings.second_encoder,
        **pinned_weights(warehouse.workspace.root),
        **pinned_blend(),
        **pinned_brevity(),
    }
    with warehouse.connect() as con:
        snapshot, created = record_snapshot(
            con, warehouse.workspace.lance(), collection, settings.encoder_model, retrieval
        )
    return StageOutcome(
        rows_in=sum(snapshot.counts.values()),
        rows_out=int(created),
        skipped=not created,
        details={
            "snapshot_id": snapshot.snapshot_id,
            "content_hash": snapshot.content_hash,
            "recorded_cutoff": snapshot.recorded_cutoff.isoformat(),
            "lance_versions": snapshot.lance_versions,
            "retrieval": snapshot.retrieval,
        },
    )
