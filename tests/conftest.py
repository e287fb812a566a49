"""Shared fixtures: an isolated environment and one build of the sample corpus per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_corpus"
SHARED_DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")


@pytest.fixture(scope="session", autouse=True)
def dagster_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway Dagster instance home for the whole session, and one LLM answer cache
    shared by every build of the session (the same session text is answered once)."""
    from dagster_project.build import ensure_instance_config

    home = tmp_path_factory.mktemp("dagster_home")
    ensure_instance_config(home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    os.environ["KGMEM_LLM_CACHE"] = str(tmp_path_factory.mktemp("llm") / "llm_cache.duckdb")
    return home


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory, dagster_home: Path):
    """The sample corpus built once through the CLI's code path, with the default settings
    (the LLM stage is opt-in, so none runs): (workspace, summaries)."""
    from dagster_project.build import build_collection
    from dagster_project.definitions import kgmem_definitions
    from dagster_project.resources import PipelineSettings
    from stores.workspace import Workspace

    workspace = Workspace.at(tmp_path_factory.mktemp("kgmem_home"))
    inputs = [str(SAMPLE / "documents"), str(SAMPLE / "conversations")]
    settings = PipelineSettings(llm_backend="none")
    summaries = build_collection("sample", inputs, workspace, kgmem_definitions(), settings)
    return workspace, summaries


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
