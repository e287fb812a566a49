"""A workspace's shared data under a data URL: the URL is recorded and checked, errors are
one line, and Parquet shards (through Beam) and graph indexes (manifest last) live on a
real S3-compatible server (moto, `tests.s3_server`)."""

from __future__ import annotations

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pytest

from pipelines.launcher import launch
from pipelines.parquet_io import clear_shards, read_shards
from pipelines.settings import BuildSettings
from pipelines.stage_io import ReadStageInput
from stores.data_url import check_reachable, delete
from stores.graph_index import (
    MANIFEST,
    fetch_graph_index,
    graph_index_url,
    has_graph_index,
    read_graph_index,
    store_graph_index,
)
from stores.workspace import Workspace
from tests.s3_server import free_port
from tests.stores.test_graph_index import _index
from transforms.progress import read_progress

ROWS = pa.table({"n": list(range(7))})


def test_the_data_url_is_recorded_and_a_different_one_refused(tmp_path) -> None:
    shared = tmp_path / "shared"
    first = Workspace.at(tmp_path / "home", data_url=f"file://{shared}")
    first.connect().close()
    again = Workspace.at(tmp_path / "home")
    assert again.data_url == str(shared) and again.lance_path == f"{shared}/lance"
    assert again.parquet_dir("c", "segments") == f"{shared}/parquet/c/segments"
    with pytest.raises(ValueError, match=f"keeps its data at {shared}, but --data-url says"):
        Workspace.at(tmp_path / "home", data_url="s3://other-bucket/kg")
    (tmp_path / "local" / "lance").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"already keeps its data in its folder \(lance/\)"):
        Workspace.at(tmp_path / "local", data_url="s3://some-bucket/kg")
    with pytest.raises(ValueError, match="scheme gs:// is not supported"):
        Workspace.at(tmp_path / "new", data_url="gs://bucket/kg")
    with pytest.raises(ValueError, match="not a valid S3 bucket name"):
        Workspace.at(tmp_path / "new", data_url="s3://No_Such/kg")


def test_an_unreachable_endpoint_or_a_missing_bucket_is_one_line(s3, monkeypatch, tmp_path) -> None:
    with pytest.raises(OSError, match=r"bucket 'kgmem-absent' does not exist at endpoint http"):
        check_reachable("s3://kgmem-absent/kg")
    closed = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", closed)
    home = tmp_path / "home"
    with pytest.raises(OSError) as raised:
        Workspace.at(home, data_url="s3://kgmem-any/kg").connect()
    message = str(raised.value)
    assert message.startswith(f"data URL s3://kgmem-any/kg: cannot reach it at endpoint {closed}")
    assert "\n" not in message
    assert not (home / "workspace.json").exists(), "nothing recorded"


def _double(p: beam.Pipeline, input_pattern: str, output_prefix: str, _: object) -> None:
    schema = pa.schema([("n", pa.int64())])
    rows = p | ReadStageInput(input_pattern) | beam.Map(lambda r: {"n": 2 * r["n"]})
    rows | beam.io.WriteToParquet(output_prefix, schema, file_name_suffix=".parquet")


def test_beam_stage_shards_live_on_the_object_store(s3, tmp_path) -> None:
    bucket = s3.new_bucket()
    folder = f"s3://{bucket}/kg/parquet/c/double"
    progress = tmp_path / "progress.log"
    prefix = launch(_double, ROWS, folder, progress, BuildSettings(), None)
    output = read_shards(prefix, pa.schema([("n", pa.int64())]))
    assert sorted(output.column("n").to_pylist()) == [2 * n for n in range(7)]
    keys = s3.keys(bucket)
    assert "kg/parquet/c/double/input/part-00000-of-00001.parquet" in keys
    assert any(k.startswith("kg/parquet/c/double/output/part-") for k in keys), keys
    found = read_progress(progress)
    assert (found.done, found.total) == (7, 7), "progress is counted locally"
    clear_shards(prefix)
    assert not any(k.startswith("kg/parquet/c/double/output/part-") for k in s3.keys(bucket))


def test_a_graph_index_is_shared_manifest_last_and_cached_per_host(s3, tmp_path) -> None:
    bucket = s3.new_bucket()
    builder = Workspace(tmp_path / "builder", f"s3://{bucket}/kg")
    assert store_graph_index(builder, _index(3), "snap-1")
    assert not store_graph_index(builder, _index(5), "snap-1"), "never rewritten"
    assert f"kg/graph_index/snap-1/{MANIFEST}" in s3.keys(bucket)
    reader = Workspace(tmp_path / "reader", builder.data_url)
    directory = fetch_graph_index(reader, "snap-1")
    assert directory == tmp_path / "reader" / "cache" / "graph_index" / "snap-1"
    mapped = read_graph_index(directory)
    assert mapped is not None and mapped.n_facts == 3
    assert isinstance(mapped.fact_vectors, np.memmap)
    delete([f"{graph_index_url(builder, 'snap-1')}/{MANIFEST}"])  # an upload cut short
    assert not has_graph_index(builder, "snap-1")
    assert fetch_graph_index(Workspace(tmp_path / "late", builder.data_url), "snap-1") is None
    assert fetch_graph_index(reader, "snap-1") == directory, "the cached copy stays valid"
