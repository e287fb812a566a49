"""A build whose workspace keeps its data on an S3-compatible server (moto, started by the
tests on the loopback address) passes the local end-to-end checks, makes the same
snapshot as the local sample build, and answers queries alike from another "host" that
has only the catalog."""

from __future__ import annotations

import json
import shutil

import pytest

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
def test_a_build_with_its_data_on_s3_equals_the_local_build(
    sample_build, graph_memory, s3, tmp_path, monkeypatch, capsys
) -> None:
    bucket = s3.new_bucket()
    home = tmp_path / "home"
    cache = sample_build[0].embedding_cache_path  # vectors by text hash: a warm, local cache
    (home / "cache").mkdir(parents=True)
    shutil.copy(cache, home / "cache" / cache.name)
    workspace = Workspace.at(home, data_url=f"s3://{bucket}/kgmem")
    inputs = [str(SAMPLE / "documents"), str(SAMPLE / "conversations")]
    settings = PipelineSettings(llm_backend="none")  # as the local sample build
    summaries = build_collection("sample", inputs, workspace, kgmem_definitions(), settings)

    assert_sample_build(workspace, summaries)
    built = next(s for s in summaries if s.stage == "memory_snapshot").metadata
    local = next(s for s in sample_build[1] if s.stage == "memory_snapshot").metadata
    assert (built["snapshot_id"], built["content_hash"]) == (
        local["snapshot_id"],
        local["content_hash"],
    )
    keys = s3.keys(bucket)
    for folder in SHARED:
        assert any(k.startswith(f"kgmem/{folder}/") for k in keys), f"no {folder}/ in the bucket"
    assert f"kgmem/graph_index/{built['snapshot_id']}/{MANIFEST}" in keys
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
    cached = host / "cache" / "graph_index" / built["snapshot_id"] / MANIFEST
    assert cached.is_file(), "the index was downloaded once into the host's cache"

    monkeypatch.setenv(HOME_ENV, str(home))  # restored after the test: main() sets both
    monkeypatch.setenv(DATA_URL_ENV, "")
    capsys.readouterr()
    assert main(["query", QUERIES[0], "--home", str(home), "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and hits[0]["text"], "the CLI found the data without --data-url"
    other = ["query", QUERIES[0], "--home", str(home), "--data-url", f"s3://{bucket}/other"]
    assert main(other) == 2
    assert f"keeps its data at s3://{bucket}/kgmem" in capsys.readouterr().err
