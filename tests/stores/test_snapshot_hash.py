"""A snapshot's content hash covers a segment's links, not only its text; a rebuild of
unchanged content maps to the same snapshot unless a table it pins was built again."""

from pathlib import Path

import duckdb
import lancedb
import pyarrow as pa
import pytest

from memory.snapshot_view import SnapshotView
from stores.pinned_table import PinnedVersionGone, open_pinned
from stores.snapshots import content_hash, lance_table_name, record_snapshot
from stores.workspace import Workspace


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


def _empty_tables(db: lancedb.DBConnection) -> None:
    for kind, columns in (
        ("entities", ["entity_id", "description"]),
        ("facts", ["fact_id", "statement"]),
    ):
        rows = pa.table({c: pa.array([], pa.string()) for c in columns})
        db.create_table(lance_table_name("c", kind), rows)


def test_changed_node_links_change_the_hash_and_equal_content_keeps_it(tmp_path):
    db = lancedb.connect(str(tmp_path))
    _empty_tables(db)
    con = duckdb.connect()
    con.execute("CREATE TABLE fact_versions (collection VARCHAR, version_id VARCHAR)")
    before = _hash(db, con, ["document:d1"])
    assert _hash(db, con, ["document:d1"]) == before
    assert _hash(db, con, ["document:d1", "phrase:support group"]) != before


def test_a_table_built_again_makes_a_new_snapshot_and_the_old_one_refuses(
    tmp_path: Path,
) -> None:
    """Deleting a pinned table and building it again with the same content keeps the
    content hash, but the old snapshot's version now names rows written after it: the
    rebuild records a new snapshot, and the old one refuses to open that table."""
    workspace = Workspace.at(tmp_path)
    db = workspace.lance()
    _empty_tables(db)
    db.create_table(lance_table_name("c", "segments"), _segments(["document:d1"]))
    db.open_table(lance_table_name("c", "segments")).add(_segments(["document:d1"])[:0])
    with workspace.connect() as con:
        first, created = record_snapshot(con, db, "c", "encoder")
        again, created_again = record_snapshot(con, db, "c", "encoder")
    assert created and not created_again and again.snapshot_id == first.snapshot_id
    assert first.lance_versions["segments"] == 2

    db.drop_table(lance_table_name("c", "segments"))
    db.create_table(lance_table_name("c", "segments"), _segments(["document:d1"]))
    db.open_table(lance_table_name("c", "segments")).add(_segments(["document:d1"])[:0])
    with workspace.connect() as con:
        remade, created = record_snapshot(con, db, "c", "encoder")
        latest, created_again = record_snapshot(con, db, "c", "encoder")
    assert created and remade.content_hash == first.content_hash
    assert remade.snapshot_id != first.snapshot_id and remade.lance_versions["segments"] == 2
    assert not created_again and latest.snapshot_id == remade.snapshot_id

    name = lance_table_name("c", "segments")
    with pytest.raises(PinnedVersionGone, match=r"written at .* after the snapshot"):
        open_pinned(db, name, first.lance_versions["segments"], first.created_at)
    with pytest.raises(PinnedVersionGone, match="has no version 7"):
        open_pinned(db, name, 7, remade.created_at)
    assert open_pinned(db, name, 2, remade.created_at).count_rows() == 1
    with pytest.raises(PinnedVersionGone):
        SnapshotView(first, workspace.connect, db).table("segments")
    assert SnapshotView(remade, workspace.connect, db).table("segments").count_rows() == 1
