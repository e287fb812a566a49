"""Stage 6b, `segment_nodes`: the LLM-free structure of the graph: which topic, document,
session, speaker, day and phrase nodes each segment links to, and each turn's next turn
(`transforms.graph_nodes`, `transforms.phrases`).

Read by `graph_embeddings` into the segments table, so a snapshot pins it. Skipped while
its inputs (segment ids, document titles, entity links, phrases) and rules are unchanged.
"""

from __future__ import annotations

from pipelines.outcome import StageOutcome, unchanged, value_counts
from stores.stage_inputs import (
    document_titles,
    node_inputs_digest,
    node_segments,
    segment_phrase_rows,
)
from stores.warehouse import WarehouseStore
from transforms import graph_nodes
from transforms.ids import content_id
from transforms.phrases import shared_phrases

STAGE = "segment_nodes"


def run(warehouse: WarehouseStore, collection: str) -> StageOutcome:
    """Replace the collection's segment links."""
    fingerprint = content_id(node_inputs_digest(warehouse, collection), graph_nodes.RULES_VERSION)
    if warehouse.fingerprint_unchanged(collection, STAGE, fingerprint):
        return unchanged()
    segments = node_segments(warehouse, collection)
    titles = graph_nodes.topic_keys(document_titles(warehouse, collection))
    links = list(graph_nodes.segment_nodes(segments, titles, warehouse.entity_of(collection)))
    links += shared_phrases(segment_phrase_rows(warehouse, collection))
    links += [
        {"segment_id": sid, "node_id": following, "kind": graph_nodes.NEXT_TURN}
        for sid, following in graph_nodes.next_turns(segments).items()
    ]
    warehouse.replace_collection(
        STAGE, collection, [{"collection": collection, **link} for link in links]
    )
    warehouse.record_fingerprint(collection, STAGE, fingerprint)
    return StageOutcome(
        rows_in=len(segments),
        rows_out=len(links),
        details={
            "topics": len(titles),
            "links_by_kind": value_counts([link["kind"] for link in links]),
        },
    )
