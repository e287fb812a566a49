"""Stage 9, `graph_index`: precompute what every graph strategy reads for each snapshot of
the collection (`transforms.graph_index`: node tables, fact columns, statement vectors and
the mention and support CSR matrices) and write it beside the snapshot
(`stores.graph_index`; uploaded under the data URL when the workspace has one), so a
query process maps the index instead of building its graph at the first query.

Every snapshot of the collection that lacks a complete index gets one (a snapshot recorded
before indexes existed, or whose index a crash left half-written); an index is never
rewritten, like its snapshot. Statements the snapshot's facts table lacks are embedded
with the snapshot's encoder.
"""

from __future__ import annotations

from pipelines.outcome import StageOutcome
from stores.graph_index import compute_graph_index, has_graph_index, store_graph_index
from stores.snapshots import list_snapshots
from stores.warehouse import WarehouseStore
from transforms.embedding import encode

STAGE = "graph_index"


def run(warehouse: WarehouseStore, collection: str) -> StageOutcome:
    """Index the collection's snapshots that have no index yet."""
    workspace = warehouse.workspace
    with warehouse.connect() as con:
        snapshots = list_snapshots(con, collection)
        pending = [s for s in snapshots if not has_graph_index(workspace, s.snapshot_id)]
        written = []
        for snapshot in pending:
            model = snapshot.embedding_model
            index = compute_graph_index(
                con, workspace.lance(), snapshot, lambda texts, m=model: encode(texts, m)
            )
            if store_graph_index(workspace, index, snapshot.snapshot_id):
                written.append(
                    {
                        "snapshot_id": snapshot.snapshot_id,
                        "facts": index.n_facts,
                        "entities": len(index.entity_ids),
                        "segments": len(index.segment_ids),
                    }
                )
    return StageOutcome(
        rows_in=len(snapshots),
        rows_out=len(written),
        skipped=not pending,
        details={"indexed": written},
    )
