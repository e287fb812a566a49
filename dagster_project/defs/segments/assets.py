"""Stage 2: cut documents into chunks and conversations into turns and sessions."""

import time

import dagster as dg
import pyarrow as pa

from dagster_project.defs.contract_check import contract_result, contract_spec
from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from schemas.tables import SEGMENTS
from transforms.segmenting import segment_documents

STAGE = "segments"


@dg.asset(
    partitions_def=collections_partitions,
    group_name="ingest",
    kinds={"duckdb"},
    deps=["raw_documents"],
    check_specs=[contract_spec(STAGE)],
)
def segments(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: PipelineSettings
) -> dg.MaterializeResult:
    """Sentence-aware chunks of documents, turns and sessions of conversations, each with
    its document, char offsets, speaker, session and observed time."""
    started = time.perf_counter()
    collection = context.partition_key
    documents = warehouse.rows("SELECT * FROM documents WHERE collection = ?", [collection])
    known = warehouse.ledger(collection, STAGE)
    todo = [d for d in documents if d["doc_id"] not in known]
    stale = known - {d["doc_id"] for d in documents}
    result = segment_documents(todo, settings.chunk_tokens)
    rows = pa.Table.from_pylist(result.segments, schema=SEGMENTS)
    warehouse.replace_documents(
        "segments", collection, STAGE, [d["doc_id"] for d in todo], rows, stale
    )
    quarantined = warehouse.set_quarantine(collection, STAGE, result.quarantined)
    frame = warehouse.fetch("SELECT * FROM segments WHERE collection = ?", [collection]).to_pandas()
    return stage_result(
        started=started,
        rows_in=len(todo),
        rows_out=len(result.segments),
        quarantined=quarantined,
        skipped=not todo and not stale,
        total_segments=len(frame),
        check_results=[contract_result(STAGE, frame)],
    )
