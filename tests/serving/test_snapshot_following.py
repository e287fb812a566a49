"""A running `kgmem serve` and builds into the same home: the build is not blocked by
the server, a server on `latest` answers from the new snapshot once it lands (without a
restart), and a server pinned to the old snapshot keeps answering the same."""

from __future__ import annotations

import shutil
import time

import httpx
import pytest

from benchmarks.serve_process import running_server
from dagster_project.build import build_collection
from dagster_project.definitions import kgmem_definitions
from dagster_project.resources import PipelineSettings
from stores.workspace import Workspace
from tests.conftest import SAMPLE

FIRST = "2020-06-01-priya-natarajan-profile.md"
LATER = "2023-05-02-qa-team-move.md"
QUESTION = {"text": "Which team moved, and where to?", "k": 3, "strategy": "hybrid"}


def snapshot_of(url: str) -> str:
    return httpx.get(f"{url}/health", timeout=30).json()["snapshot_id"]


@pytest.mark.slow
def test_latest_follows_a_build_and_a_pinned_snapshot_stays(tmp_path):
    inbox = tmp_path / "docs"
    inbox.mkdir()
    shutil.copy(SAMPLE / "documents" / FIRST, inbox / FIRST)
    workspace = Workspace.at(tmp_path / "home")
    settings = PipelineSettings(llm_backend="none")
    defs = kgmem_definitions()
    build_collection("offices", [str(inbox)], workspace, defs, settings)
    with (
        running_server(workspace.root, "--mcp", "off", "--poll", "0.2") as latest,
        running_server(workspace.root, "--mcp", "off", "--snapshot", "latest") as follower,
    ):
        old = snapshot_of(latest.url)
        with running_server(workspace.root, "--mcp", "off", "--snapshot", old) as pinned:
            before = httpx.post(f"{pinned.url}/query", json=QUESTION, timeout=60).json()
            assert before["snapshot_id"] == old
            shutil.copy(SAMPLE / "documents" / LATER, inbox / LATER)
            build_collection("offices", [str(inbox)], workspace, defs, settings)
            deadline = time.monotonic() + 30
            while snapshot_of(latest.url) == old and time.monotonic() < deadline:
                time.sleep(0.2)
            new = snapshot_of(latest.url)
            assert new != old
            answer = httpx.post(f"{latest.url}/query", json=QUESTION, timeout=60).json()
            assert answer["snapshot_id"] == new
            assert any(LATER in hit["provenance"]["source_path"] for hit in answer["hits"])
            assert snapshot_of(follower.url) in (old, new)  # polls at its own pace
            after = httpx.post(f"{pinned.url}/query", json=QUESTION, timeout=60).json()
            assert after == before
            old_named = {**QUESTION, "snapshot": old}
            assert httpx.post(f"{latest.url}/query", json=old_named, timeout=60).json() == before
