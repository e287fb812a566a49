"""Stage 8: pin the collection's memory as an immutable, addressable snapshot."""

import time

import dagster as dg

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from memory.hybrid_weights import pinned_weights
from stores.snapshots import record_snapshot


@dg.asset(
    partitions_def=collections_partitions,
    group_name="memory",
    kinds={"duckdb", "lancedb"},
    deps=["graph_embeddings", "entity_links", "fact_versions"],
)
def memory_snapshot(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """A snapshot id pinning the DuckDB recorded-time cutoff, the LanceDB table versions
    and the retrieval settings (second encoder, `hybrid` weights per corpus kind); a
    rebuild with unchanged content and settings returns the existing snapshot."""
    started = time.perf_counter()
    collection = context.partition_key
    retrieval = {
        "fusion_encoder": settings.second_encoder,
        **pinned_weights(warehouse.workspace.root),
    }
    with warehouse.connect() as con:
        snapshot, created = record_snapshot(
            con, warehouse.workspace.lance(), collection, settings.encoder_model, retrieval
        )
    context.log.info(f"snapshot {snapshot.snapshot_id} ({'new' if created else 'unchanged'})")
    return stage_result(
        started=started,
        rows_in=sum(snapshot.counts.values()),
        rows_out=int(created),
        skipped=not created,
        snapshot_id=snapshot.snapshot_id,
        content_hash=snapshot.content_hash,
        recorded_cutoff=snapshot.recorded_cutoff.isoformat(),
        lance_versions=dg.MetadataValue.json(snapshot.lance_versions),
        retrieval=dg.MetadataValue.json(snapshot.retrieval),
    )
