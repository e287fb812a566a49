"""Whole-pipeline builds through Dagster: summary counts, idempotent re-runs, quarantine."""

import json
from pathlib import Path

import pytest

from dagster_project.build import build_collection
from dagster_project.definitions import kgmem_definitions
from stores.workspace import Workspace
from tests.conftest import SAMPLE

defs = kgmem_definitions()


def _by_stage(summaries):
    return {s.stage: s for s in summaries}


def test_sample_build_summary(sample_build):
    assert_sample_build(*sample_build)


def assert_sample_build(workspace: Workspace, summaries: list) -> None:
    """What a build of the sample corpus must give, wherever its workspace keeps its data
    (also `test_object_storage_build`)."""
    stages = _by_stage(summaries)
    assert list(stages)[-2:] == ["memory_snapshot", "graph_index"], "ends with its snapshot"
    assert stages["graph_index"].rows_out == 1, "the new snapshot was indexed"
    assert not {"retrieval_evaluation", "temporal_evaluation"} & set(stages), "own jobs"
    raw = stages["raw_documents"]
    assert raw.rows_in == raw.rows_out + raw.quarantined
    assert raw.rows_out >= 32
    assert stages["segments"].checks == {"segments_contract": True}
    assert stages["fact_versions"].checks == {"fact_versions_contract": True}
    assert stages["entity_mentions"].rows_out > 100
    assert stages["memory_snapshot"].metadata["snapshot_id"].startswith("snap-")
    con = workspace.connect(read_only=True)
    acme = con.execute(
        "SELECT e.name, list(a.alias) FROM entities e "
        "JOIN entity_aliases a USING (collection, entity_id) "
        "WHERE e.collection = 'sample' AND e.norm_key = 'acme' GROUP BY ALL"
    ).fetchall()
    con.close()
    assert acme and {"Acme Corporation", "Acme Corp"} <= set(acme[0][1])


def test_rebuild_of_unchanged_input_changes_nothing(sample_build):
    workspace, first = sample_build
    con = workspace.connect(read_only=True)
    versions_before = con.execute("SELECT count(*) FROM fact_version_log").fetchall()[0][0]
    con.close()
    inputs = [str(SAMPLE / "documents"), str(SAMPLE / "conversations")]
    second = build_collection("sample", inputs, workspace, defs)
    before, after = _by_stage(first)["memory_snapshot"], _by_stage(second)["memory_snapshot"]
    assert after.metadata["snapshot_id"] == before.metadata["snapshot_id"]
    assert after.metadata["content_hash"] == before.metadata["content_hash"]
    assert all(s.skipped for s in second), [s.stage for s in second if not s.skipped]
    con = workspace.connect(read_only=True)
    assert con.execute("SELECT count(*) FROM fact_version_log").fetchall()[0][0] == versions_before
    assert con.execute("SELECT count(*) FROM snapshots").fetchall()[0][0] == 1


def test_malformed_files_are_quarantined_and_the_rest_builds(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ["2020-02-10-harborview-office-opens.md", "2020-06-01-priya-natarajan-profile.md"]:
        (corpus / name).write_text((SAMPLE / "documents" / name).read_text())
    (corpus / "broken.json").write_text('{"sessions": [')
    good = {"id": "ok", "title": "Fine", "text": "Acme Corporation acquired Brightpage Labs."}
    (corpus / "news.jsonl").write_text(json.dumps(good) + '\n{"id": "bad", "title": "no text"}\n')
    workspace = Workspace.at(tmp_path / "home")
    summaries = build_collection("broken", [str(corpus)], workspace, defs)
    raw = _by_stage(summaries)["raw_documents"]
    assert (raw.rows_in, raw.rows_out, raw.quarantined) == (5, 3, 2)
    con = workspace.connect(read_only=True)
    rows = con.execute(
        "SELECT source_file, record_ref, reason FROM quarantine "
        "WHERE collection = ? ORDER BY source_file",
        ["broken"],
    ).fetchall()
    assert [(Path(f).name, ref) for f, ref, _ in rows] == [
        ("broken.json", "file"),
        ("news.jsonl", "line 2 (id bad)"),
    ]
    assert rows[0][2].startswith("invalid JSON") and rows[1][2] == "missing string field 'text'"
    assert _by_stage(summaries)["memory_snapshot"].metadata["snapshot_id"].startswith("snap-")


def test_unknown_input_path_is_a_clear_error(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="not found"):
        build_collection("x", [str(tmp_path / "missing")], Workspace.at(tmp_path), defs)
