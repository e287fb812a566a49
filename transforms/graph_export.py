"""The snapshot export's graph formats, made from its tables (`schemas.export`):

- GraphML: entities as nodes, every fact version as a directed edge (a multigraph: one
  pair may carry many), readable by networkx (`networkx.read_graphml`), Gephi and yEd;
- CSV in the layout of `neo4j-admin database import full`: per table a header file
  (`:ID`, `:LABEL`, `:START_ID`, `:END_ID`, `:TYPE`, typed properties) and a data file,
  arrays joined by `;` (neo4j-admin's default array delimiter), times as ISO-8601 UTC.

Pure functions from Arrow tables to bytes, deterministic: the same tables make the same
bytes (rows in table order, attributes in declared order). Both are vectorised Arrow
compute and Arrow's CSV writer, never a Python loop over rows: an export must cost about
what reading the snapshot's tables costs (issue 36 measures it against that)."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

ARRAY_DELIMITER = ";"
ISO_UTC = "%Y-%m-%dT%H:%M:%SZ"
"""Times as text: Arrow's `%S` carries the microseconds; every table time is UTC."""
_XML_INVALID = "[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]"
_XML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_XML_ATTRIBUTE_ESCAPES = (('"', "&quot;"), ("\n", "&#10;"), ("\r", "&#13;"), ("\t", "&#9;"))

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


def text_column(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A column as text, nulls kept: ISO UTC times, `;`-joined lists, shortest floats."""
    kind = column.type
    if pa.types.is_timestamp(kind):
        return pc.strftime(column, format=ISO_UTC)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        if not pa.types.is_string(kind.value_type):
            column = column.cast(pa.list_(pa.string()))
        return pc.binary_join(column, ARRAY_DELIMITER)
    return column.cast(pa.string())


def graphml(entities: pa.Table, facts: pa.Table) -> bytes:
    """Entities and fact versions as a GraphML multigraph (UTF-8). A fact end that the
    entity table lacks becomes a bare node, listed after the entities."""
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
    node_ids = _xml_attribute(entities.column("entity_id"))
    _write_lines(
        out, ["    <node id=", node_ids, ">", *_data(entities, "n", ENTITY_ATTRIBUTES), "</node>\n"]
    )
    ends = pa.chunked_array(
        [*facts.column("head_entity_id").chunks, *facts.column("tail_entity_id").chunks],
        type=pa.string(),
    )
    missing = pc.unique(ends.filter(pc.invert(pc.is_in(ends, entities.column("entity_id")))))
    _write_lines(out, ["    <node id=", _xml_attribute(missing), "/>\n"])
    _write_lines(
        out,
        [
            "    <edge id=",
            _xml_attribute(facts.column("version_id")),
            " source=",
            _xml_attribute(facts.column("head_entity_id")),
            " target=",
            _xml_attribute(facts.column("tail_entity_id")),
            ">",
            *_data(facts, "e", FACT_ATTRIBUTES),
            "</edge>\n",
        ],
    )
    out.write("  </graph>\n</graphml>\n")
    return out.getvalue().encode("utf-8")


def _xml_text(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    text = pc.replace_substring_regex(text_column(column), pattern=_XML_INVALID, replacement="")
    for raw, escaped in _XML_ESCAPES:
        text = pc.replace_substring(text, pattern=raw, replacement=escaped)
    return text


def _xml_attribute(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A column as double-quoted XML attribute values."""
    text = _xml_text(column)
    for raw, escaped in _XML_ATTRIBUTE_ESCAPES:
        text = pc.replace_substring(text, pattern=raw, replacement=escaped)
    return pc.binary_join_element_wise('"', text, '"', "")


def _data(
    table: pa.Table, prefix: str, attributes: Sequence[tuple[str, str]]
) -> list[pa.Array | pa.ChunkedArray]:
    """Per attribute, each row's `<data>` element, or nothing where the cell is null."""
    elements = []
    for name, _ in attributes:
        if name not in table.column_names:
            continue
        element = pc.binary_join_element_wise(
            f'<data key="{prefix}_{name}">', _xml_text(table.column(name)), "</data>", ""
        )
        elements.append(pc.fill_null(element, ""))
    return elements


def _write_lines(out: io.StringIO, parts: Sequence[str | pa.Array | pa.ChunkedArray]) -> None:
    """Concatenate `parts` (constants and columns) row by row and write the rows."""
    columns = [p for p in parts if not isinstance(p, str)]
    if not columns or len(columns[0]) == 0:
        return
    lines = pc.binary_join_element_wise(*parts, "")
    out.write("".join(lines.to_pylist()))


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
    labels = (
        pa.array([label] * table.num_rows, pa.string())
        if label
        else pc.utf8_capitalize(table.column("kind"))
    )
    columns = [table.column(key), *(table.column(c) for c in properties), labels]
    return {f"{name}_header.csv": _csv_header(header), f"{name}.csv": _csv(columns)}


def _relationship_files(
    name: str, table: pa.Table, start: str, end: str, kind: str, properties: Sequence[str]
) -> dict[str, bytes]:
    header = [":START_ID", ":END_ID", ":TYPE", *(_typed_header(table, c) for c in properties)]
    columns = [table.column(c) for c in (start, end, kind, *properties)]
    return {f"{name}_header.csv": _csv_header(header), f"{name}.csv": _csv(columns)}


def _typed_header(table: pa.Table, column: str) -> str:
    """`column` with its neo4j-admin type suffix (times as `:datetime`)."""
    kind = table.schema.field(column).type
    if pa.types.is_timestamp(kind):
        return f"{column}:datetime"
    return column + NEO4J_TYPES.get(kind, "")


def _csv_header(header: Sequence[str]) -> bytes:
    return (",".join(header) + "\n").encode("utf-8")


def _csv(columns: Sequence[pa.Array | pa.ChunkedArray]) -> bytes:
    """Rows by Arrow's CSV writer: numbers as they are, every other cell as text (quoted),
    a null as an empty unquoted cell (neo4j-admin: no property)."""
    cells = [
        c if pa.types.is_integer(c.type) or pa.types.is_floating(c.type) else text_column(c)
        for c in columns
    ]
    out = io.BytesIO()
    pa_csv.write_csv(
        pa.table(cells, names=[f"c{i}" for i in range(len(cells))]),
        out,
        pa_csv.WriteOptions(include_header=False),
    )
    return out.getvalue()
