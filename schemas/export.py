"""The tables `kgmem export` writes: what a snapshot sees, one table per kind, each typed
here (the Parquet files carry these schemas; CSV and GraphML take their columns from
them)."""

from __future__ import annotations

import pyarrow as pa

from schemas.tables import FACT_VERSION_LOG, LANCE_ENTITIES, LANCE_SEGMENTS, TIMESTAMP

EXPORT_ENTITIES = pa.schema(
    [LANCE_ENTITIES.field(n) for n in ("entity_id", "name", "entity_type", "aliases")]
)
"""The snapshot's entities with their types and aliases."""

EXPORT_FACT_VERSIONS = FACT_VERSION_LOG.append(pa.field("recorded_to", TIMESTAMP))
"""Every fact version recorded by the snapshot's cutoff, `recorded_to` as of the cutoff
(null where no version recorded by then superseded it)."""

EXPORT_SEGMENTS = pa.schema(
    [
        LANCE_SEGMENTS.field(n)
        for n in (
            "segment_id",
            "doc_id",
            "kind",
            "title",
            "source_path",
            "text",
            "char_start",
            "char_end",
            "speaker",
            "session_id",
            "turn_id",
            "observed_at",
            "mentioned_from",
            "mentioned_to",
        )
    ]
)
"""The snapshot's segments with their document, title and char span."""

GRAPH_NODES = pa.schema([("node_id", pa.string()), ("kind", pa.string()), ("label", pa.string())])
"""The passage graph's nodes: `segment`, `entity`, and each structural or phrase node of
`transforms.graph_nodes` with its kind (`topic`, `document`, `session`, `speaker`, `day`,
`phrase`, ...: the prefix of its id)."""

GRAPH_EDGES = pa.schema(
    [
        ("source", pa.string()),
        ("target", pa.string()),
        ("kind", pa.string()),
        ("weight", pa.float64()),
    ]
)
"""The passage graph's edges: `mentions` (segment -> entity), `links` (segment -> a
structural or phrase node), `next_turn` (turn -> next turn), and the untyped entity
links (`co_occurs`, `synonym`, with their weight). Typed facts are `fact_versions`."""

EXPORT_TABLES = {
    "entities": EXPORT_ENTITIES,
    "fact_versions": EXPORT_FACT_VERSIONS,
    "segments": EXPORT_SEGMENTS,
    "graph_nodes": GRAPH_NODES,
    "graph_edges": GRAPH_EDGES,
}
"""Exported table name -> its schema, in the order they are written."""
