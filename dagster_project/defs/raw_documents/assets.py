"""Stage 1: load a collection's files into the `documents` table."""

import time

import dagster as dg

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from transforms.loaders import STAGE, load_inputs


@dg.asset(partitions_def=collections_partitions, group_name="ingest", kinds={"duckdb"})
def raw_documents(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Every document and conversation of the collection, with content-hash ids; unchanged
    documents are left alone, removed ones dropped, unreadable records quarantined."""
    started = time.perf_counter()
    collection = context.partition_key
    loaded = load_inputs(collection, warehouse.inputs_of(collection))
    current = {d["doc_id"] for d in loaded.documents}
    known = warehouse.ledger(collection, STAGE)
    new = [d for d in loaded.documents if d["doc_id"] not in known]
    warehouse.replace_documents(
        "documents", collection, STAGE, [d["doc_id"] for d in new], new, known - current
    )
    warehouse.set_quarantine(collection, STAGE, loaded.quarantined)
    context.log.info(
        f"{len(new)} new, {len(known - current)} removed, "
        f"{loaded.records_quarantined} records and {loaded.turns_quarantined} turns quarantined"
    )
    return stage_result(
        started=started,
        rows_in=loaded.records_read,
        rows_out=len(loaded.documents),
        quarantined=loaded.records_quarantined,
        skipped=not new and not (known - current),
        new_documents=len(new),
        removed_documents=len(known - current),
        turns_in=loaded.turns_read,
        turns_out=loaded.turns_read - loaded.turns_quarantined,
        turns_quarantined=loaded.turns_quarantined,
    )
