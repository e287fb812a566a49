"""Stage 1, `raw_documents`: load a collection's files into the `documents` table.

Documents are keyed by content hash, so an unchanged document is left alone, a removed
one is dropped, and an unreadable file or record goes to quarantine with its reason
(`transforms.loaders`). Records read = documents out + records quarantined; conversation
turns are counted apart. Records kept with a loss (a turn without a readable time) add a
warning row to the quarantine table (reason `warning: ...`), not to the counts.
"""

from __future__ import annotations

from pipelines.outcome import StageOutcome
from stores.warehouse import WarehouseStore
from transforms.loaders import STAGE, load_inputs


def run(warehouse: WarehouseStore, collection: str) -> StageOutcome:
    """Load the collection's registered inputs and store their new documents."""
    loaded = load_inputs(collection, warehouse.inputs_of(collection))
    current = {d["doc_id"] for d in loaded.documents}
    known = warehouse.ledger(collection, STAGE)
    new = [d for d in loaded.documents if d["doc_id"] not in known]
    removed = known - current
    warehouse.replace_documents(
        "documents", collection, STAGE, [d["doc_id"] for d in new], new, removed
    )
    warehouse.set_quarantine(collection, STAGE, [*loaded.quarantined, *loaded.warnings])
    return StageOutcome(
        rows_in=loaded.records_read,
        rows_out=len(loaded.documents),
        quarantined=loaded.records_quarantined,
        skipped=not new and not removed,
        details={
            "new_documents": len(new),
            "removed_documents": len(removed),
            "turns_in": loaded.turns_read,
            "turns_out": loaded.turns_read - loaded.turns_quarantined,
            "turns_quarantined": loaded.turns_quarantined,
            "warnings": len(loaded.warnings),
        },
    )
