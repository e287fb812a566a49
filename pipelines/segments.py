"""Stage 2, `segments`: cut documents into sentence-aware chunks, and conversations into
turns and sessions (`transforms.segmenting`), for the documents not yet segmented.

The whole table is returned for its data contract (identity, provenance, sane offsets).
"""

from __future__ import annotations

import pyarrow as pa

from pipelines.outcome import StageOutcome
from pipelines.settings import BuildSettings
from schemas.tables import SEGMENTS
from stores.stage_inputs import collection_table, documents
from stores.warehouse import WarehouseStore
from transforms.segmenting import segment_documents

STAGE = "segments"


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Segment the collection's new documents and drop the segments of removed ones."""
    stored = documents(warehouse, collection)
    known = warehouse.ledger(collection, STAGE)
    todo = [d for d in stored if d["doc_id"] not in known]
    stale = known - {d["doc_id"] for d in stored}
    result = segment_documents(todo, settings.chunk_tokens)
    rows = pa.Table.from_pylist(result.segments, schema=SEGMENTS)
    warehouse.replace_documents(
        "segments", collection, STAGE, [d["doc_id"] for d in todo], rows, stale
    )
    quarantined = warehouse.set_quarantine(collection, STAGE, result.quarantined)
    table = collection_table(warehouse, STAGE, collection)
    return StageOutcome(
        rows_in=len(todo),
        rows_out=len(result.segments),
        quarantined=quarantined,
        skipped=not todo and not stale,
        details={"total_segments": table.num_rows},
        contract_rows=table,
    )
