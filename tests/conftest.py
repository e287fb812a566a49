"""Shared fixtures: an isolated environment and one build of the sample corpus per session."""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from transforms.gc_tuning import tune_gc

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_corpus"
SHARED_DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
# One thread each for the numeric libraries (torch's OpenMP, NumPy's OpenBLAS) in the test
# processes and every process they start, set before either library loads: the suite
# already keeps each core busy with a worker of its own (TEST_WORKERS), and a library's
# second thread only contends with the other worker, its spinning threads costing CPU. On
# test_eval_retrieval.py, with the machine otherwise busy: 44 s of CPU, against 56 to 62 s
# with the libraries' defaults.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

tune_gc()  # the test processes collect garbage as kgmem's own processes do


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """End-to-end tests (marked `slow`: whole builds, subprocess builds) run first, so that
    with the files spread over workers the longest start at once instead of ending the
    run late."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's folder that every xdist worker shares (the base temp without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def dagster_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway Dagster instance home for the whole session, one LLM answer cache
    shared by every build of the session (the same session text is answered once), and one
    embedding cache shared by every build of the run, xdist workers and the builds they
    start included (a sample text is encoded once per run, not once per workspace;
    benchmarks that time cold builds pin their workspace's own cache)."""
    from dagster_project.build import ensure_instance_config
    from pipelines.settings import EMBEDDING_CACHE_ENV

    home = tmp_path_factory.mktemp("dagster_home")
    ensure_instance_config(home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ["KGMEM_LLM_CACHE"] = str(tmp_path_factory.mktemp("llm") / "llm_cache.duckdb")
    os.environ[EMBEDDING_CACHE_ENV] = str(shared_folder(tmp_path_factory) / "embeddings.duckdb")
    return home


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory, dagster_home: Path):
    """The sample corpus built once through the CLI's code path, with the default settings
    (the LLM stage is opt-in, so none runs): (workspace, summaries).

    Built once per test run, not per xdist worker: the first worker to get here builds
    under a file lock in the folder the workers share, the others wait and read it (the
    tests only read it, or rebuild it unchanged)."""
    from dagster_project.build import build_collection
    from dagster_project.definitions import kgmem_definitions
    from dagster_project.resources import PipelineSettings
    from dagster_project.stage_events import StageSummary
    from stores.workspace import Workspace

    shared = shared_folder(tmp_path_factory)
    workspace = Workspace.at(shared / "sample_build")
    recorded = shared / "sample_build.json"
    with open(shared / "sample_build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not recorded.exists():
            inputs = [str(SAMPLE / "documents"), str(SAMPLE / "conversations")]
            settings = PipelineSettings(llm_backend="none")
            built = build_collection("sample", inputs, workspace, kgmem_definitions(), settings)
            recorded.write_text(json.dumps([asdict(s) for s in built], default=str))
    summaries = [StageSummary(**row) for row in json.loads(recorded.read_text())]
    return workspace, summaries


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory):
    """An S3-compatible server (moto) on the loopback address for the session."""
    from tests.s3_server import running_s3_server

    with running_s3_server(tmp_path_factory.mktemp("s3") / "moto.log") as server:
        yield server


@pytest.fixture
def s3(s3_server, monkeypatch: pytest.MonkeyPatch):
    """The S3 server with this test's process environment pointing at it, as a user's
    shell would (AWS_ENDPOINT_URL, credentials, region)."""
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    return s3_server


@pytest.fixture(scope="session")
def graph_build(sample_build):
    """The workspace of the sample build, for retrieval strategy tests: the graph, facts
    and embeddings."""
    return sample_build[0]


@pytest.fixture(scope="session")
def graph_memory(graph_build):
    """A `Memory` open on the LLM-free sample snapshot (read-only, shared by the session)."""
    from memory import Memory

    with Memory.open(graph_build.root) as memory:
        yield memory
