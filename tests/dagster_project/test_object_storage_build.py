"""The scale-out build: `kgmem build` on Beam's Dask runner (a LocalCluster of one worker
process that the build starts and closes) with the workspace's data on an
S3-compatible server (moto, started by the tests on the loopback address). It makes the
local DirectRunner sample build's snapshot, keeps its shared data in the bucket only, and
answers queries alike from another "host" that has only the catalog.

The build passes the local end-to-end test's checks (`assert_sample_build`). One build
covers both halves of the scale-out path, the runner and the data location,
because each is a component of the other's check: a snapshot equal to the local
DirectRunner build's content hash holds only if the Dask workers computed the same rows
and every store round-tripped through S3 unchanged. Each half also has tests of its own
(tests/pipelines/test_beam_runners.py: every stage on Dask workers equals the in-memory
runner; tests/stores/test_data_url.py: shards and graph indexes on S3). One Dask worker
is enough here: that the rows split over two workers come out the same is
test_beam_runners' finding, and each worker process pays for its own imports and models
(about 25 s of CPU in this suite)."""

from __future__ import annotations

import json
import logging
import shutil

import pytest

from benchmarks.reliability import newest_hash
from dagster_project.build import build_collection
from dagster_project.definitions import kgmem_definitions
from dagster_project.resources import PipelineSettings
from kgmem.cli import main
from memory import Memory
from stores.graph_index import MANIFEST
from stores.workspace import DATA_URL_ENV, HOME_ENV, WORKSPACE_FILE, Workspace
from tests.conftest import SAMPLE
from tests.dagster_project.test_build import assert_sample_build

SHARED = ("lance", "parquet", "graph_index", "models")
QUERIES = ("Where does Priya Natarajan work?", "Who is the CEO of Acme?")
STRATEGIES = ("dense", "hipporag_ppr")


@pytest.mark.slow
def test_a_dask_build_with_its_data_on_s3_equals_the_local_build(
    sample_build, graph_memory, s3, tmp_path, monkeypatch, capsys, caplog
) -> None:
    monkeypatch.setenv(HOME_ENV, str(tmp_path))  # restored after the test: main() sets both
    monkeypatch.setenv(DATA_URL_ENV, "")
    local, local_summaries = sample_build
    bucket, home = s3.new_bucket(), tmp_path / "home"
    # the session's shared embedding cache (tests/conftest.py) already holds the sample's
    # vectors: this build encodes nothing again
    workspace = Workspace.at(home, data_url=f"s3://{bucket}/kgmem")
    inputs = [str(SAMPLE / "documents"), str(SAMPLE / "conversations")]
    settings = PipelineSettings(llm_backend="none", beam_runner="DaskRunner", beam_workers=1)
    with caplog.at_level(logging.INFO, logger="pipelines.dask_cluster"):
        summaries = build_collection("sample", inputs, workspace, kgmem_definitions(), settings)
    started = [r for r in caplog.records if "started a Dask LocalCluster of 1" in r.message]
    assert len(started) == 1, "one cluster per build"

    assert_sample_build(workspace, summaries)  # the local end-to-end test's checks
    built, expected = (
        next(s for s in run if s.stage == "memory_snapshot").metadata
        for run in (summaries, local_summaries)
    )
    key = ("snapshot_id", "content_hash")
    assert [built[k] for k in key] == [expected[k] for k in key]
    assert expected["content_hash"] == newest_hash(local.root, "sample")

    snapshot_id = built["snapshot_id"]
    keys = s3.keys(bucket)
    for folder in SHARED:
        assert any(k.startswith(f"kgmem/{folder}/") for k in keys), f"no {folder}/ in the bucket"
    assert f"kgmem/graph_index/{snapshot_id}/{MANIFEST}" in keys
    assert not [name for name in SHARED if (home / name).exists()], "shared data stayed local"

    host = tmp_path / "query-host"  # another host: a copy of the catalog, nothing else
    host.mkdir()
    for name in ("warehouse.duckdb", WORKSPACE_FILE):
        shutil.copy(home / name, host / name)
    with Memory.open(host) as remote:
        for strategy in STRATEGIES:
            for text in QUERIES:
                got = remote.query(text, strategy=strategy, k=5).as_dict()
                assert got == graph_memory.query(text, strategy=strategy, k=5).as_dict()
    cached = host / "cache" / "graph_index" / snapshot_id / MANIFEST
    assert cached.is_file(), "the index was downloaded once into the host's cache"

    capsys.readouterr()
    assert main(["query", QUERIES[0], "--home", str(home), "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and hits[0]["text"], "the CLI found the data without --data-url"
    other = ["query", QUERIES[0], "--home", str(home), "--data-url", f"s3://{bucket}/other"]
    assert main(other) == 2
    assert f"keeps its data at s3://{bucket}/kgmem" in capsys.readouterr().err
