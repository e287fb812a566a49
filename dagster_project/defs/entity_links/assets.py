"""Stage 7b: co-occurrence and synonym links between entities (`pipelines.entity_links`),
into the LanceDB table the snapshot pins beside the segments."""

import time

import dagster as dg

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from pipelines import entity_links as link_pipeline


@dg.asset(
    partitions_def=collections_partitions,
    group_name="memory",
    kinds={"lancedb"},
    deps=["graph_embeddings", "entity_mentions", "fact_versions"],
)
def entity_links(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Entity pairs within KGERMAR's window that no typed fact joins, and entities whose
    names are nearest neighbours above HippoRAG 2's synonym threshold."""
    started = time.perf_counter()
    collection = context.partition_key
    outcome = link_pipeline.run(
        warehouse.rows, warehouse.entity_of(collection), warehouse.workspace.lance(), collection
    )
    return stage_result(
        started=started,
        rows_in=outcome.names,
        rows_out=sum(outcome.by_kind.values()),
        skipped=outcome.written == 0,
        links_by_kind=dg.MetadataValue.json(outcome.by_kind),
        links_version=outcome.version,
    )
