"""A snapshot answers the same forever: after a newer build adds documents and changes
facts, the old snapshot's answers (segments, scores, facts, paths) are unchanged for
every strategy, while the new snapshot sees the new memory."""

import json
import shutil

import pytest

from dagster_project.build import build_collection
from dagster_project.definitions import kgmem_definitions
from dagster_project.resources import PipelineSettings
from kgmem.cli import main
from memory import Memory
from memory.strategies.registry import STRATEGIES
from stores.workspace import Workspace
from tests.conftest import SAMPLE

defs = kgmem_definitions()

DOCUMENTS = [
    "2020-02-10-harborview-office-opens.md",
    "2020-06-01-priya-natarajan-profile.md",
    "2021-03-15-northgate-office-opens.md",
]
NEWER = "2023-05-02-qa-team-move.md"
QUESTIONS = ["Which city is Priya Natarajan's office in?", "Where is the Northgate Office?"]


def _answers(memory: Memory) -> dict[str, list]:
    return {
        f"{strategy}|{question}": [
            (h.segment_id, h.score, h.facts, h.paths)
            for h in memory.query(question, strategy=strategy, k=5)
        ]
        for strategy in STRATEGIES
        for question in QUESTIONS
    }


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory: pytest.TempPathFactory):
    """(workspace, old snapshot id, its answers at build time, new snapshot id)."""
    inbox = tmp_path_factory.mktemp("docs")
    for name in DOCUMENTS:
        shutil.copy(SAMPLE / "documents" / name, inbox / name)
    workspace = Workspace.at(tmp_path_factory.mktemp("immutable_home"))
    settings = PipelineSettings(llm_backend="none")
    build_collection("offices", [str(inbox)], workspace, defs, settings)
    with Memory.open(workspace.root) as memory:
        old_id, before = memory.snapshot.snapshot_id, _answers(memory)
    shutil.copy(SAMPLE / "documents" / NEWER, inbox / NEWER)
    build_collection("offices", [str(inbox)], workspace, defs, settings)
    with Memory.open(workspace.root) as memory:
        new_id = memory.snapshot.snapshot_id
    return workspace, old_id, before, new_id


@pytest.mark.slow
def test_old_snapshot_answers_are_unchanged_after_a_newer_build(two_builds):
    workspace, old_id, before, new_id = two_builds
    assert new_id != old_id
    with Memory.open(workspace.root, snapshot=old_id) as memory:
        assert _answers(memory) == before
        old_counts = memory.snapshot.counts
    with Memory.open(workspace.root, snapshot=new_id) as memory:
        assert memory.snapshot.counts["segments"] > old_counts["segments"]
        texts = [h.text for h in memory.query("QA team move", strategy="bm25", k=10)]
    assert any("Quality Assurance" in t for t in texts), "the newer snapshot sees the new file"


def test_kgmem_snapshots_lists_both_with_hash_time_and_sources(two_builds, capsys):
    workspace, old_id, _, new_id = two_builds
    assert main(["snapshots", "--json", "--home", str(workspace.root)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["snapshot_id"] for s in listed] == [new_id, old_id], "newest first"
    for row in listed:
        assert len(row["content_hash"]) == 64 and row["created_at"]
        assert row["source_partitions"] == ["offices"]
        assert {"segments", "entities", "facts", "structure"} <= set(row["lance_versions"])
