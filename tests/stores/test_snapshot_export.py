"""`kgmem export` writes exactly what a snapshot sees: the row counts of the snapshot,
nothing recorded after its cutoff, typed Parquet, a GraphML multigraph networkx reads,
the neo4j-admin CSV layout, and the same bytes on a second run."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import shutil
from datetime import timedelta

import networkx as nx
import pyarrow.parquet as pq
import pytest

from kgmem.cli import main
from schemas.export import EXPORT_TABLES
from stores.snapshots import list_snapshots
from stores.workspace import Workspace


def digests(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def workspace(sample_build, tmp_path_factory):
    """A copy of the sample build with one fact version recorded after its snapshot (as a
    later build would), which no export of that snapshot may show."""
    home = tmp_path_factory.mktemp("export") / "home"
    shutil.copytree(sample_build[0].root, home)
    workspace = Workspace.at(home)
    with contextlib.closing(workspace.connect()) as con:
        snapshot = list_snapshots(con)[0]
        con.execute(
            "INSERT INTO fact_version_log SELECT * REPLACE ('later-version' AS version_id, "
            "? AS recorded_from, version_id AS supersedes, 'close' AS operation) "
            "FROM fact_version_log WHERE collection = ? ORDER BY version_id LIMIT 1",
            [snapshot.recorded_cutoff + timedelta(seconds=1), snapshot.collection],
        )
    return workspace, snapshot


def export(workspace, snapshot, fmt, out) -> None:
    home = str(workspace.root)
    args = ["export", "--home", home, "--snapshot", snapshot.snapshot_id, "--format", fmt]
    assert main([*args, "--out", str(out)]) == 0


def test_parquet_has_the_snapshots_rows_typed_and_nothing_newer(workspace, tmp_path):
    workspace, snapshot = workspace
    export(workspace, snapshot, "parquet", tmp_path / "a")
    tables = {name: pq.read_table(tmp_path / "a" / f"{name}.parquet") for name in EXPORT_TABLES}
    for name, table in tables.items():
        assert table.schema.remove_metadata() == EXPORT_TABLES[name], name
    assert tables["entities"].num_rows == snapshot.counts["entities"]
    assert tables["segments"].num_rows == snapshot.counts["segments"]
    assert tables["fact_versions"].num_rows == snapshot.counts["fact_versions"]
    versions = tables["fact_versions"].column("version_id").to_pylist()
    assert "later-version" not in versions
    assert tables["fact_versions"].column("recorded_to").null_count == len(versions)
    kinds = set(tables["graph_edges"].column("kind").to_pylist())
    assert {"mentions", "links", "next_turn"} <= kinds
    export(workspace, snapshot, "parquet", tmp_path / "b")
    assert digests(tmp_path / "a") == digests(tmp_path / "b")


def test_graphml_is_a_multigraph_networkx_reads(workspace, tmp_path):
    workspace, snapshot = workspace
    export(workspace, snapshot, "graphml", tmp_path / "g")
    graph = nx.read_graphml(tmp_path / "g" / "graph.graphml")
    assert isinstance(graph, nx.MultiDiGraph)
    assert graph.number_of_edges() == snapshot.counts["fact_versions"]
    assert graph.number_of_nodes() >= snapshot.counts["entities"]
    _, _, attributes = next(iter(graph.edges(data=True)))
    assert {"relation", "confidence", "recorded_from", "operation"} <= set(attributes)
    export(workspace, snapshot, "graphml", tmp_path / "h")
    assert digests(tmp_path / "g") == digests(tmp_path / "h")


def test_csv_follows_the_neo4j_admin_import_layout(workspace, tmp_path):
    workspace, snapshot = workspace
    export(workspace, snapshot, "csv", tmp_path / "c")
    headers = {p.name: next(csv.reader(p.open())) for p in (tmp_path / "c").glob("*_header.csv")}
    assert headers["entities_header.csv"][0] == "entity_id:ID"
    assert headers["facts_header.csv"][:3] == [":START_ID", ":END_ID", ":TYPE"]
    assert "confidence:double" in headers["facts_header.csv"]
    ids = set()
    for name in ("entities", "segments", "nodes"):
        rows = list(csv.reader((tmp_path / "c" / f"{name}.csv").open()))
        assert all(len(r) == len(headers[f"{name}_header.csv"]) for r in rows)
        ids.update(r[0] for r in rows)
    for name in ("facts", "edges"):
        rows = list(csv.reader((tmp_path / "c" / f"{name}.csv").open()))
        assert rows and all(r[0] in ids and r[1] in ids for r in rows), name
    export(workspace, snapshot, "csv", tmp_path / "d")
    assert digests(tmp_path / "c") == digests(tmp_path / "d")


def test_unknown_snapshot_is_one_line(workspace, tmp_path, capsys):
    workspace, _ = workspace
    args = ["export", "--home", str(workspace.root), "--snapshot", "snap-nope"]
    assert main([*args, "--out", str(tmp_path / "x")]) == 2
    assert "--snapshot snap-nope: no such snapshot" in capsys.readouterr().err
