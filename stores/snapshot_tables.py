"""A snapshot's tables as it sees them, for `kgmem export`: its LanceDB tables at the
versions it pinned and its fact versions as of its recorded cutoff, each typed with its
declaration (`schemas.export`) and sorted by its key, so that an unchanged snapshot
reads the same bytes every time.

The warehouse is read on one short read-only connection (a build writing the same home
waits only for that read)."""

from __future__ import annotations

import contextlib

import duckdb
import lancedb
import pyarrow as pa
import pyarrow.compute as pc

from schemas.export import (
    EXPORT_ENTITIES,
    EXPORT_FACT_VERSIONS,
    EXPORT_SEGMENTS,
    GRAPH_EDGES,
    GRAPH_NODES,
)
from schemas.tables import FACT_VERSION_LOG
from stores.pinned_table import open_pinned
from stores.snapshots import Snapshot
from stores.workspace import Workspace, lance_table_name

FACTS_AS_OF_CUTOFF_SQL = f"""
SELECT {", ".join(f"v.{c}" for c in FACT_VERSION_LOG.names)},
       CASE WHEN s.recorded_from <= $cutoff THEN s.recorded_from END AS recorded_to
FROM fact_version_log v
LEFT JOIN fact_version_log s ON s.supersedes = v.version_id AND s.recorded_from <= $cutoff
WHERE v.collection = $collection AND v.recorded_from <= $cutoff
ORDER BY v.version_id
"""
"""Fact versions recorded by the cutoff, each closed on the recorded axis only by a
version recorded by then (built from the declared column names, not input)."""


def snapshot_tables(workspace: Workspace, snapshot: Snapshot) -> dict[str, pa.Table]:
    """The snapshot's exported tables (`schemas.export.EXPORT_TABLES`)."""
    db = workspace.lance()
    segments = _pinned(db, snapshot, "segments")
    entities = _pinned(db, snapshot, "entities")
    links = _pinned(db, snapshot, "links") if "links" in snapshot.lance_versions else None
    with contextlib.closing(workspace.connect(read_only=True)) as con:
        facts = fact_versions(con, snapshot)
    nodes, edges = passage_graph(segments, entities, links)
    return {
        "entities": _typed(entities, EXPORT_ENTITIES, "entity_id"),
        "fact_versions": facts,
        "segments": _typed(segments, EXPORT_SEGMENTS, "segment_id"),
        "graph_nodes": nodes,
        "graph_edges": edges,
    }


def fact_versions(con: duckdb.DuckDBPyConnection, snapshot: Snapshot) -> pa.Table:
    params = {"collection": snapshot.collection, "cutoff": snapshot.recorded_cutoff}
    table = con.sql(FACTS_AS_OF_CUTOFF_SQL, params=params).to_arrow_table()
    return table.cast(EXPORT_FACT_VERSIONS)


def passage_graph(
    segments: pa.Table, entities: pa.Table, links: pa.Table | None
) -> tuple[pa.Table, pa.Table]:
    """(nodes, edges) of the passage graph (`schemas.export.GRAPH_NODES`, `GRAPH_EDGES`)
    from the pinned segments' entity, node and next-turn links and the entity links."""
    entity_names = dict(
        zip(
            entities.column("entity_id").to_pylist(),
            entities.column("name").to_pylist(),
            strict=True,
        )
    )
    nodes: dict[str, tuple[str, str | None]] = {
        entity_id: ("entity", name) for entity_id, name in entity_names.items()
    }
    edges: list[tuple[str, str, str, float | None]] = []
    columns = [
        c for c in ("entity_ids", "node_ids", "next_segment_id") if c in segments.column_names
    ]
    rows = segments.select(["segment_id", "title", *columns]).to_pylist()
    for row in rows:
        nodes[row["segment_id"]] = ("segment", row["title"])
    for row in rows:
        segment_id = row["segment_id"]
        for entity_id in row.get("entity_ids") or ():
            nodes.setdefault(entity_id, ("entity", None))
            edges.append((segment_id, entity_id, "mentions", None))
        for node_id in row.get("node_ids") or ():
            kind, _, label = node_id.partition(":")
            nodes.setdefault(node_id, (kind, label) if label else ("entity", None))
            edges.append((segment_id, node_id, "links", None))
        if row.get("next_segment_id") in nodes:
            edges.append((segment_id, row["next_segment_id"], "next_turn", None))
    for link in links.select(["head_id", "tail_id", "kind", "weight"]).to_pylist() if links else ():
        edges.append((link["head_id"], link["tail_id"], link["kind"], link["weight"]))
    node_rows = sorted((node_id, kind, label) for node_id, (kind, label) in nodes.items())
    edges.sort(key=lambda e: (e[0], e[1], e[2], -1.0 if e[3] is None else e[3]))
    return (
        pa.Table.from_pylist(
            [dict(zip(GRAPH_NODES.names, r, strict=True)) for r in node_rows], GRAPH_NODES
        ),
        pa.Table.from_pylist(
            [dict(zip(GRAPH_EDGES.names, e, strict=True)) for e in edges], GRAPH_EDGES
        ),
    )


def _pinned(db: lancedb.DBConnection, snapshot: Snapshot, kind: str) -> pa.Table:
    name = lance_table_name(snapshot.collection, kind)
    table = open_pinned(db, name, snapshot.lance_versions[kind], snapshot.created_at)
    return table.to_arrow()


def _typed(table: pa.Table, schema: pa.Schema, key: str) -> pa.Table:
    """`table`'s columns of `schema`, cast to it, sorted by `key`."""
    selected = table.select(schema.names).cast(schema)
    return selected.take(pc.sort_indices(selected, [(key, "ascending")]))
