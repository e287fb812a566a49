"""The snapshot export's graph formats, made from its tables (`schemas.export`):

- GraphML: entities as nodes, every fact version as a directed edge (a multigraph: one
  pair may carry many), readable by networkx (`networkx.read_graphml`), Gephi and yEd;
- CSV in the layout of `neo4j-admin database import full`: per table a header file
  (`:ID`, `:LABEL`, `:START_ID`, `:END_ID`, `:TYPE`, typed properties) and a data file,
  arrays joined by `;` (neo4j-admin's default array delimiter).

Pure functions from Arrow tables to bytes, deterministic: the same tables make the same
bytes (rows in table order, attributes in declared order)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pyarrow as pa
import pyarrow.compute as pc

ARRAY_DELIMITER = ";"
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

ENTITY_ATTRIBUTES = (("name", "string"), ("entity_type", "string"), ("aliases", "string"))
FACT_ATTRIBUTES = (
    ("version_id", "string"),
    ("fact_id", "string"),
    ("relation", "string"),
    ("confidence", "double"),
    ("valid_from", "string"),
    ("valid_to", "string"),
    ("recorded_from", "string"),
    ("recorded_to", "string"),
    ("operation", "string"),
    ("source_segment_ids", "string"),
    ("extractor", "string"),
)
"""GraphML attributes of nodes and edges: (column, GraphML type); times as ISO text, lists
joined by `;`."""


def text_value(value: Any) -> str:
    """A cell as text: ISO times, `;`-joined lists, empty for null."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list):
        return ARRAY_DELIMITER.join(text_value(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def graphml(entities: pa.Table, facts: pa.Table) -> bytes:
    """Entities and fact versions as a GraphML multigraph (UTF-8)."""
    out = io.StringIO()
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write('<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
    for domain, attributes in (("node", ENTITY_ATTRIBUTES), ("edge", FACT_ATTRIBUTES)):
        for name, kind in attributes:
            out.write(
                f'  <key id="{domain[0]}_{name}" for="{domain}" attr.name="{name}" '
                f'attr.type="{kind}"/>\n'
            )
    out.write('  <graph id="kgmem" edgedefault="directed">\n')
    for row in entities.to_pylist():
        out.write(f"    <node id={_attr(row['entity_id'])}>")
        _data(out, "n", ENTITY_ATTRIBUTES, row)
        out.write("</node>\n")
    known = set(entities.column("entity_id").to_pylist())
    for row in facts.to_pylist():
        head, tail = row["head_entity_id"], row["tail_entity_id"]
        for end in (head, tail):
            if end not in known:  # an end the snapshot's entity table lacks
                known.add(end)
                out.write(f"    <node id={_attr(end)}/>\n")
        out.write(
            f"    <edge id={_attr(row['version_id'])} source={_attr(head)} target={_attr(tail)}>"
        )
        _data(out, "e", FACT_ATTRIBUTES, row)
        out.write("</edge>\n")
    out.write("  </graph>\n</graphml>\n")
    return out.getvalue().encode("utf-8")


def _attr(value: str) -> str:
    return quoteattr(_XML_INVALID.sub("", value))


def _data(
    out: io.StringIO, prefix: str, attributes: Sequence[tuple[str, str]], row: dict[str, Any]
) -> None:
    for name, _ in attributes:
        value = row.get(name)
        if value is not None:
            text = escape(_XML_INVALID.sub("", text_value(value)))
            out.write(f'<data key="{prefix}_{name}">{text}</data>')


NEO4J_TYPES = {
    pa.string(): "",
    pa.int32(): ":int",
    pa.int64(): ":long",
    pa.float64(): ":double",
    pa.list_(pa.string()): ":string[]",
}


def neo4j_csv(tables: dict[str, pa.Table]) -> dict[str, bytes]:
    """File name -> content of the neo4j-admin import layout: `entities`, `segments` and
    `nodes` (the passage graph's other nodes) as nodes labelled `Entity`, `Segment` and
    their kind; `facts` (a relationship per fact version, typed by its relation) and
    `edges` (the passage graph's edges, typed by kind) as relationships. One id space:
    entity and segment ids are hashes, structural node ids are prefixed."""
    entities, segments = tables["entities"], tables["segments"]
    nodes = tables["graph_nodes"]
    others = nodes.filter(
        pc.invert(pc.is_in(nodes.column("kind"), pa.array(["entity", "segment"])))
    )
    facts = tables["fact_versions"]
    files: dict[str, bytes] = {}
    files.update(_node_files("entities", entities, "entity_id", "Entity"))
    files.update(_node_files("segments", segments, "segment_id", "Segment"))
    files.update(_node_files("nodes", others, "node_id", None))
    fact_columns = [
        c for c in facts.column_names if c not in ("head_entity_id", "tail_entity_id", "relation")
    ]
    files.update(
        _relationship_files(
            "facts", facts, "head_entity_id", "tail_entity_id", "relation", fact_columns
        )
    )
    files.update(
        _relationship_files("edges", tables["graph_edges"], "source", "target", "kind", ["weight"])
    )
    return files


def _node_files(name: str, table: pa.Table, key: str, label: str | None) -> dict[str, bytes]:
    properties = [c for c in table.column_names if c != key]
    header = [f"{key}:ID", *(_typed_header(table, c) for c in properties), ":LABEL"]
    rows = (
        [row[key], *(row[c] for c in properties), label or row["kind"].capitalize()]
        for row in table.to_pylist()
    )
    return {f"{name}_header.csv": _csv([header]), f"{name}.csv": _csv(rows)}


def _relationship_files(
    name: str, table: pa.Table, start: str, end: str, kind: str, properties: Sequence[str]
) -> dict[str, bytes]:
    header = [":START_ID", ":END_ID", ":TYPE", *(_typed_header(table, c) for c in properties)]
    rows = (
        [row[start], row[end], row[kind], *(row[c] for c in properties)]
        for row in table.to_pylist()
    )
    return {f"{name}_header.csv": _csv([header]), f"{name}.csv": _csv(rows)}


def _typed_header(table: pa.Table, column: str) -> str:
    """`column` with its neo4j-admin type suffix (times as `:datetime`)."""
    kind = table.schema.field(column).type
    if pa.types.is_timestamp(kind):
        return f"{column}:datetime"
    return column + NEO4J_TYPES.get(kind, "")


def _csv(rows: Iterable[Sequence[Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for row in rows:
        writer.writerow([text_value(v) for v in row])
    return out.getvalue().encode("utf-8")
