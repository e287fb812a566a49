"""Beam runners from configuration: options built for every runner, sharded Parquet inputs,
models shared per worker, and the extraction pipeline (entity mentions, then relation
candidates) giving the same rows on the in-memory DirectRunner, the multi-processing
DirectRunner, Prism (when its binary is on disk; it cannot be downloaded offline) and
Beam's Dask runner on a `LocalCluster` of two worker processes, where every other stage
(phrases, the fact fold, LLM triplets, Hugging Face NER, the pair classifier) gives the
in-memory rows too and each worker loads a model once."""

from __future__ import annotations

import argparse
import glob
import json
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import (
    DirectOptions,
    FlinkRunnerOptions,
    GoogleCloudOptions,
    PortableOptions,
    PrismRunnerOptions,
    SparkRunnerOptions,
    StandardOptions,
    WorkerOptions,
)
from apache_beam.runners.dask.dask_runner import DaskOptions
from apache_beam.runners.runner import create_runner
from distributed import Client

from dagster_project.resources import PipelineSettings
from kgmem.cli.beam_args import add_beam_arguments, beam_overrides
from pipelines import (
    entity_mentions,
    fact_versions,
    llm_triplets,
    relation_candidates,
    relation_classifier,
    segment_phrases,
)
from pipelines.dask_cluster import DASK_RUNNER_IMPL, local_cluster
from pipelines.options import (
    DIRECT_RUNNER_IMPL,
    add_runner_arguments,
    pipeline_options,
    stage_options,
)
from pipelines.parquet_io import read_shards, write_input
from pipelines.prism import offline_prism_binary, prism_release_name
from pipelines.runner_modes import DASK_RUNNER
from schemas.tables import (
    ASSERTIONS,
    ENTITY_MENTIONS,
    FACT_INTERVALS,
    RELATION_CANDIDATES,
    SEGMENT_PHRASES,
    SEGMENTS,
)
from stores.stage_inputs import join_mentions
from tests.pipelines.test_fact_versions import assertion_rows
from tests.pipelines.test_llm_pipeline import responder, segments_file
from tests.tiny_models import save_tiny_bert
from tests.transforms.llm.fake_openai_server import FakeChatServer
from tests.transforms.test_hf_ner import build_tiny_ner_model
from tests.transforms.test_relation_classifier_hf import LABELS as RE_LABELS
from transforms.relation_classifier import candidates as classifier_candidates
from transforms.relation_classifier.candidates import ClassifierConfig, ClassifierRelationDoFn
from transforms.spacy_models import load_spacy

# --- options ---------------------------------------------------------------------------


def test_direct_runner_modes_and_workers():
    default = pipeline_options()
    assert default.view_as(StandardOptions).runner == DIRECT_RUNNER_IMPL
    assert default.view_as(DirectOptions).direct_running_mode == "in_memory"
    assert default.view_as(DirectOptions).direct_num_workers == 1
    multi = pipeline_options(direct_running_mode="multi_processing", direct_num_workers=3)
    assert multi.view_as(DirectOptions).direct_running_mode == "multi_processing"
    assert multi.view_as(DirectOptions).direct_num_workers == 3
    per_cpu = pipeline_options(direct_running_mode="multi_threading")
    assert per_cpu.view_as(DirectOptions).direct_num_workers == 0
    with pytest.raises(ValueError, match="direct_running_mode"):
        pipeline_options(direct_running_mode="threads")


def test_pass_through_flags_win_over_configuration():
    options = pipeline_options(
        extra_flags=["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    )
    assert options.view_as(DirectOptions).direct_running_mode == "multi_processing"
    assert options.view_as(DirectOptions).direct_num_workers == 2
    switched = pipeline_options(extra_flags=["--runner=FlinkRunner"])
    assert switched.view_as(StandardOptions).runner == "FlinkRunner"


@pytest.mark.parametrize(
    ("runner", "flags", "view", "expected"),
    [
        (
            "PrismRunner",
            ["--prism_location=/opt/prism"],
            PrismRunnerOptions,
            {"prism_location": "/opt/prism"},
        ),
        (
            "PortableRunner",
            ["--job_endpoint=localhost:8099", "--environment_type=LOOPBACK"],
            PortableOptions,
            {"job_endpoint": "localhost:8099", "environment_type": "LOOPBACK"},
        ),
        (
            "FlinkRunner",
            ["--flink_master=flink:8081"],
            FlinkRunnerOptions,
            {"flink_master": "flink:8081"},
        ),
        (
            "SparkRunner",
            ["--spark_master_url=spark://spark:7077", "--spark_submit_uber_jar"],
            SparkRunnerOptions,
            {"spark_master_url": "spark://spark:7077", "spark_submit_uber_jar": True},
        ),
        (
            "DataflowRunner",
            ["--project=p", "--region=europe-west4", "--temp_location=gs://b/tmp"],
            GoogleCloudOptions,
            {"project": "p", "region": "europe-west4", "temp_location": "gs://b/tmp"},
        ),
    ],
)
def test_runner_specific_flags_pass_through(
    runner: str, flags: list[str], view: type, expected: dict[str, Any]
):
    options = PipelineSettings(beam_runner=runner, beam_flags=flags).beam_options()
    assert options.view_as(StandardOptions).runner == runner
    assert {k: getattr(options.view_as(view), k) for k in expected} == expected
    assert options.view_as(DirectOptions).direct_num_workers == 1, "Direct flags stay unset"


def test_dataflow_container_image_is_a_worker_option():
    image = "europe-docker.pkg.dev/p/kgmem/beam:latest"
    options = pipeline_options("DataflowRunner", extra_flags=[f"--sdk_container_image={image}"])
    assert options.view_as(WorkerOptions).sdk_container_image == image


@pytest.mark.parametrize("runner", ["PrismRunner", "PortableRunner", "FlinkRunner", "SparkRunner"])
def test_portable_runner_names_resolve(runner: str):
    assert type(create_runner(runner)).__name__ == runner
    assert type(create_runner(DIRECT_RUNNER_IMPL)).__name__ == "FnApiRunner"


def test_stage_and_build_command_lines_reach_the_options():
    stage = argparse.ArgumentParser()
    add_runner_arguments(stage)
    args, rest = stage.parse_known_args(
        ["--runner=SparkRunner", "--spark_master_url=spark://m:7077", "--environment_type=LOOPBACK"]
    )
    options = stage_options(args, rest)
    assert options.view_as(StandardOptions).runner == "SparkRunner"
    assert options.view_as(SparkRunnerOptions).spark_master_url == "spark://m:7077"
    assert options.view_as(PortableOptions).environment_type == "LOOPBACK"

    build = argparse.ArgumentParser()
    add_beam_arguments(build)
    parsed = build.parse_args(
        ["--direct-running-mode=multi_processing", "--beam-workers=2", "--parquet-shard-rows=7"]
    )
    settings = PipelineSettings(**beam_overrides(parsed))
    assert settings.parquet_shard_rows == 7
    direct = settings.beam_options().view_as(DirectOptions)
    assert (direct.direct_running_mode, direct.direct_num_workers) == ("multi_processing", 2)
    flink = build.parse_args(["--beam-runner=FlinkRunner", "--beam-flag=--flink_master=f:8081"])
    assert (
        PipelineSettings(**beam_overrides(flink))
        .beam_options()
        .view_as(FlinkRunnerOptions)
        .flink_master
        == "f:8081"
    )


# --- sharded Parquet ---------------------------------------------------------------------


def test_write_input_shards_by_rows(tmp_path: Path):
    table = pa.table({"i": list(range(5))})
    pattern = write_input(table, tmp_path / "in", shard_rows=2)
    paths = sorted(glob.glob(pattern))
    assert [pq.read_metadata(p).num_rows for p in paths] == [2, 2, 1]
    assert pa.concat_tables(pq.read_table(p) for p in paths).column("i").to_pylist() == [
        0,
        1,
        2,
        3,
        4,
    ]
    write_input(table.slice(0, 0), tmp_path / "in", shard_rows=2)
    assert len(glob.glob(pattern)) == 1, "a re-run replaces the shards; empty is one shard"
    with pytest.raises(ValueError):
        write_input(table, tmp_path / "in", shard_rows=0)


# --- models once per worker --------------------------------------------------------------


def test_classifier_backend_loads_once_per_process(monkeypatch: pytest.MonkeyPatch):
    loads: list[ClassifierConfig] = []

    class Backend:
        pass

    def fake_load(cfg: ClassifierConfig) -> Backend:
        loads.append(cfg)
        return Backend()

    monkeypatch.setattr(classifier_candidates, "load_backend", fake_load)
    dofn = ClassifierRelationDoFn(ClassifierConfig(backend="hf", model="m"))
    copies = [pickle.loads(pickle.dumps(dofn)) for _ in range(3)]  # one per bundle thread
    for copy in copies:
        copy.setup()
    assert len(loads) == 1
    assert len({id(copy._backend) for copy in copies}) == 1


# --- the extraction pipeline on several runners --------------------------------------------

TEXTS = [
    "Priya Natarajan works at the Harborview Office.",
    "The Harborview Office is located in Rotterdam.",
    "Sam Okafor lives in Leeds.",
    "Helen Whitfield is the CEO of Tonerline.",
    "Marcus Bennett joined Tonerline in Amsterdam.",
    "Priya Natarajan met Sam Okafor in Rotterdam.",
    "Tonerline is headquartered in Amsterdam.",
    "Sam Okafor works at Tonerline.",
]
SHARD_ROWS = 2


def _segments() -> pa.Table:
    rows = [
        {
            "segment_id": f"s{i}",
            "collection": "c",
            "doc_id": f"d{i // 3}",
            "kind": "chunk",
            "seq": i,
            "text": text,
            "char_start": 0,
            "char_end": len(text),
            "speaker": None,
            "session_id": None,
            "turn_id": None,
            "observed_at": None,
        }
        for i, text in enumerate(TEXTS)
    ]
    return pa.Table.from_pylist(rows, schema=SEGMENTS)


def _extract(root: Path, runner: str, flags: list[str]) -> tuple[list, list, int]:
    """Run NER then relations with `runner`; sorted rows of both, and NER output shards."""
    segments = _segments()
    common = [f"--runner={runner}", *flags]
    ner_in = write_input(segments, root / "ner_in", SHARD_ROWS)
    entity_mentions.main(["--input", ner_in, "--output", str(root / "ner_out" / "part"), *common])
    mentions = read_shards(root / "ner_out" / "part", ENTITY_MENTIONS)
    rel_in = write_input(join_mentions(segments, mentions, "c"), root / "rel_in", SHARD_ROWS)
    relation_candidates.main(
        ["--input", rel_in, "--output", str(root / "rel_out" / "part"), *common]
    )
    candidates = read_shards(root / "rel_out" / "part", RELATION_CANDIDATES)
    shards = len(glob.glob(str(root / "ner_out" / "part*.parquet")))
    return _sorted(mentions), _sorted(candidates), shards


def _sorted(table: pa.Table) -> list[tuple]:
    return sorted(tuple(sorted(row.items())) for row in table.to_pylist())


@pytest.fixture(scope="module")
def in_memory(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, list, int]:
    mentions, candidates, shards = _extract(
        tmp_path_factory.mktemp("in_memory"), "DirectRunner", ["--direct_running_mode=in_memory"]
    )
    names = {dict(m)["text"] for m in mentions}
    assert {"Priya Natarajan", "Rotterdam", "Tonerline"} <= names
    assert candidates, "the dependency patterns find relations in these sentences"
    return mentions, candidates, shards


def test_multi_processing_direct_runner_matches_in_memory(tmp_path: Path, in_memory):
    flags = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    mentions, candidates, shards = _extract(tmp_path, "DirectRunner", flags)
    assert (mentions, candidates) == in_memory[:2]
    assert shards == in_memory[2] > 1, "one output shard per input shard at most (WriteShards)"


def test_prism_runner_matches_in_memory(tmp_path: Path, in_memory):
    location = os.environ.get("KGMEM_PRISM_LOCATION")
    binary = offline_prism_binary([f"--prism_location={location}"] if location else [])
    if binary is None:
        pytest.skip(
            f"Prism needs its Go binary {prism_release_name()}, which apache_beam does not "
            "ship and downloads from github.com/apache/beam/releases at first use; it is "
            "not in ~/.apache_beam/cache/prism/bin, $KGMEM_PRISM_LOCATION names none, and "
            "tests never download"
        )
    flags = [f"--prism_location={binary}", "--environment_type=LOOPBACK"]
    mentions, candidates, _ = _extract(tmp_path, "PrismRunner", flags)
    assert (mentions, candidates) == in_memory[:2]


# --- Beam's Dask runner on a LocalCluster of two worker processes ------------------------


@pytest.fixture(scope="module")
def dask_cluster() -> Iterator[str]:
    """The scheduler address of a LocalCluster of two worker processes (one thread each),
    as `local_cluster` starts for a build."""
    with local_cluster(2) as address:
        yield address


def _on_workers(address: str, fn: Callable[[], Any]) -> dict[str, Any]:
    """`fn()` run on every worker of the cluster at `address`, by worker. The client is
    closed before the next pipeline runs: with a second client open in the process, each
    of the DaskRunner's runs waited 5 s longer for its results."""
    with Client(address) as client:
        return client.run(fn)


def _dask(address: str) -> list[str]:
    return [f"--runner={DASK_RUNNER}", f"--dask_client_address={address}"]


def test_dask_runner_settings_name_the_scheduler_and_one_split_per_partition():
    build = argparse.ArgumentParser()
    add_beam_arguments(build)
    parsed = build.parse_args(["--beam-runner=DaskRunner", "--dask-address=tcp://s:8786"])
    options = PipelineSettings(**beam_overrides(parsed)).beam_options()
    assert options.view_as(StandardOptions).runner == DASK_RUNNER_IMPL
    dask = options.view_as(DaskOptions).get_all_options(drop_default=True, current_only=True)
    assert dask == {"address": "tcp://s:8786", "partition_size": 1}
    mine = pipeline_options("DaskRunner", extra_flags=["--dask_npartitions=8"])
    dask = mine.view_as(DaskOptions).get_all_options(drop_default=True, current_only=True)
    assert dask == {"npartitions": 8}, "a pass-through partitioning flag replaces kgmem's"
    flags = ["--dask_scheduler_file=/s.json"]
    with PipelineSettings(beam_runner="DaskRunner", beam_flags=flags).dask_cluster() as same:
        assert same.dask_address is None, "a scheduler file names the scheduler: no cluster"
    with PipelineSettings().dask_cluster() as direct:
        assert direct.dask_address is None


def test_dask_cluster_has_two_separate_worker_processes(dask_cluster):
    pids = _on_workers(dask_cluster, os.getpid)
    assert len(pids) == 2 and len(set(pids.values())) == 2
    assert os.getpid() not in pids.values()


def _spacy_loads() -> tuple[int, int]:
    """(loads, cache hits) of `load_spacy` in this process: run on each worker."""
    info = load_spacy.cache_info()
    return info.misses, info.hits


def test_dask_workers_load_a_model_once_however_many_bundles(tmp_path: Path, dask_cluster):
    """Beam's Dask runner calls a DoFn's `setup` for every partition (bundle); the spaCy
    loader's process cache makes that at most one load per worker: four input shards are
    four partitions and four `setup` calls, of which at most one per worker loads (none
    where an earlier test of the module loaded the model already)."""
    pattern = write_input(_segments(), tmp_path / "in", SHARD_ROWS)
    partitions = len(glob.glob(pattern))
    before = _on_workers(dask_cluster, _spacy_loads)
    flags = ["--input", pattern, "--output", str(tmp_path / "o"), *_dask(dask_cluster)]
    entity_mentions.main(flags)
    after = _on_workers(dask_cluster, _spacy_loads)
    loads = {w: (after[w][0] - before[w][0], after[w][1] - before[w][1]) for w in after}
    assert partitions == 4
    assert sum(misses + hits for misses, hits in loads.values()) == partitions, loads
    assert all(misses <= 1 for misses, _ in loads.values()), loads


def test_dask_runner_matches_in_memory(tmp_path: Path, in_memory, dask_cluster):
    mentions, candidates, shards = _extract(tmp_path, "DaskRunner", _dask(dask_cluster)[1:])
    assert (mentions, candidates, shards) == in_memory


def _stage_rows(
    root: Path, main: Callable[[list[str]], None], inputs: pa.Table, schema: pa.Schema,
    argv: list[str], flags: list[str],
) -> list[tuple]:  # fmt: skip
    """The sorted output rows of a stage's command line `main` over `inputs`."""
    pattern = write_input(inputs, root / "in", SHARD_ROWS)
    main(["--input", pattern, "--output", str(root / "out" / "part"), *argv, *flags])
    return _sorted(read_shards(root / "out" / "part", schema))


def _in_memory_and_dask(tmp_path: Path, address: str, *stage: Any) -> tuple[list, list]:
    direct = _stage_rows(tmp_path / "direct", *stage, [])
    dask = _stage_rows(tmp_path / "dask", *stage, _dask(address))
    return direct, dask


def test_dask_runner_phrases_match_in_memory(tmp_path: Path, dask_cluster):
    stage = (segment_phrases.main, _segments(), SEGMENT_PHRASES, [])
    direct, dask = _in_memory_and_dask(tmp_path, dask_cluster, *stage)
    assert direct and dask == direct


def test_dask_runner_hf_ner_matches_in_memory(tmp_path: Path, dask_cluster):
    model = build_tiny_ner_model(tmp_path / "model")
    argv = ["--backend", "hf", "--model", model, "--device", "cpu"]
    stage = (entity_mentions.main, _segments(), ENTITY_MENTIONS, argv)
    direct, dask = _in_memory_and_dask(tmp_path, dask_cluster, *stage)
    assert direct and dask == direct


def test_dask_runner_pair_classifier_matches_in_memory(tmp_path: Path, in_memory, dask_cluster):
    from transformers import BertForSequenceClassification

    model = save_tiny_bert(BertForSequenceClassification, RE_LABELS, tmp_path, RE_LABELS[3], 5.0)
    mentions = pa.Table.from_pylist([dict(m) for m in in_memory[0]], schema=ENTITY_MENTIONS)
    inputs = join_mentions(_segments(), mentions, "c")
    argv = ["--backend", "hf", "--model", str(model)]
    stage = (relation_classifier.main, inputs, RELATION_CANDIDATES, argv)
    direct, dask = _in_memory_and_dask(tmp_path, dask_cluster, *stage)
    assert direct and dask == direct


def test_dask_runner_fold_matches_in_memory(tmp_path: Path, dask_cluster):
    rows, cardinality = assertion_rows()
    assertions = pa.Table.from_pylist(rows, schema=ASSERTIONS)
    outputs = {}
    for root, flags in (("direct", []), ("dask", _dask(dask_cluster))):
        unmatched = tmp_path / root / "unmatched" / "part"
        argv = ["--collection", "c", "--unmatched", str(unmatched)]
        argv += ["--cardinality", json.dumps(cardinality)]
        stage = (fact_versions.main, assertions, FACT_INTERVALS, argv, flags)
        outputs[root] = (
            _stage_rows(tmp_path / root, *stage),
            _sorted(read_shards(unmatched, ASSERTIONS)),
        )
    assert outputs["direct"][0] and outputs["direct"][1], "facts and a lone retraction"
    assert outputs["dask"] == outputs["direct"]


def test_dask_runner_llm_triplets_match_in_memory(tmp_path: Path, dask_cluster):
    server = FakeChatServer(responder).start()
    try:
        runs = {}
        for root, flags in (("direct", []), ("dask", _dask(dask_cluster))):
            prefix = tmp_path / root / "out" / "part"
            prefix.parent.mkdir(parents=True)
            argv = ["--input", segments_file(tmp_path / root), "--output", str(prefix)]
            argv += ["--cache", str(tmp_path / root / "cache.duckdb"), "--backend", "openai"]
            argv += ["--model", "m", "--base-url", server.base_url, *flags]
            llm_triplets.main(argv)
            triplets, quarantine, stats = llm_triplets.read_outputs(prefix)
            runs[root] = (_sorted(triplets), _sorted(quarantine), stats.as_dict())
    finally:
        server.stop()
    assert runs["direct"][0] and runs["direct"][1] and runs["direct"][2]["llm_calls"] == 3
    assert runs["dask"] == runs["direct"]
