"""Stage `graph_index`: each snapshot of the collection gets its index once; a re-run
writes nothing; a lost index is rebuilt identical; a half-written one is replaced."""

from __future__ import annotations

import shutil

import numpy as np

from pipelines import graph_index as stage
from stores.graph_index import ARRAYS, MANIFEST, graph_index_dir, read_graph_index
from stores.snapshots import list_snapshots
from stores.warehouse import Warehouse
from stores.workspace import Workspace


def test_index_once_and_rebuild_identical(graph_build, tmp_path) -> None:
    root = tmp_path / "home"
    shutil.copytree(graph_build.root, root, ignore=shutil.ignore_patterns("dagster"))
    warehouse, workspace = Warehouse(str(root)), Workspace.at(root)
    with warehouse.connect() as con:
        snapshot = list_snapshots(con, "sample")[0]
    directory = graph_index_dir(workspace, snapshot.snapshot_id)
    written = read_graph_index(directory)
    assert written is not None

    again = stage.run(warehouse, "sample")
    assert again.skipped and again.rows_out == 0

    kept = {name: np.array(getattr(written, name)) for name in ARRAYS}
    shutil.rmtree(directory)
    rebuilt = stage.run(warehouse, "sample")
    assert (
        rebuilt.rows_out == 1
        and rebuilt.details["indexed"][0]["snapshot_id"] == snapshot.snapshot_id
    )
    index = read_graph_index(directory)
    assert index is not None
    for name, values in kept.items():
        assert np.array_equal(getattr(index, name), values), name

    (directory / MANIFEST).unlink()  # as if a writer died before its last file
    assert stage.run(warehouse, "sample").rows_out == 1
    assert read_graph_index(directory) is not None
