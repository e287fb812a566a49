"""A snapshot's content hash covers a segment's links, not only its text."""

import duckdb
import lancedb
import pyarrow as pa

from stores.snapshots import content_hash, lance_table_name


def _segments(node_ids: list[str]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "segment_id": "s1",
                "search_text": "Acme\nAcme moved to Rotterdam.",
                "entity_ids": ["e1"],
                "node_ids": node_ids,
                "next_segment_id": None,
            }
        ],
        schema=pa.schema(
            [
                ("segment_id", pa.string()),
                ("search_text", pa.string()),
                ("entity_ids", pa.list_(pa.string())),
                ("node_ids", pa.list_(pa.string())),
                ("next_segment_id", pa.string()),
            ]
        ),
    )


def _hash(db: lancedb.DBConnection, con: duckdb.DuckDBPyConnection, node_ids: list[str]) -> str:
    db.create_table(lance_table_name("c", "segments"), _segments(node_ids), mode="overwrite")
    return content_hash(con, db, "c", "encoder")[0]


def test_changed_node_links_change_the_hash_and_equal_content_keeps_it(tmp_path):
    db = lancedb.connect(str(tmp_path))
    for kind, columns in (
        ("entities", ["entity_id", "description"]),
        ("facts", ["fact_id", "statement"]),
    ):
        rows = pa.table({c: pa.array([], pa.string()) for c in columns})
        db.create_table(lance_table_name("c", kind), rows)
    con = duckdb.connect()
    con.execute("CREATE TABLE fact_versions (collection VARCHAR, version_id VARCHAR)")
    before = _hash(db, con, ["document:d1"])
    assert _hash(db, con, ["document:d1"]) == before
    assert _hash(db, con, ["document:d1", "phrase:support group"]) != before
