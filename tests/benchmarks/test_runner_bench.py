"""`kgmem bench runners`: its argument errors, and a tiny run end to end (the baseline and a
one-worker Dask cluster, outputs identical, every figure present). No timing assertions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.runner_scaling import generated_segments, parse_workers
from kgmem.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--workers", "0"], "distinct counts of at least 1"),
        (["--workers", "2,2"], "distinct counts of at least 1"),
        (["--workers", ","], "distinct counts of at least 1"),
        (["--workers", "1,two"], "comma-separated integers"),
        (["--documents", "0"], "--documents must be at least 1"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    json_out = tmp_path / "r.json"
    code = main(["bench", "runners", "--home", str(tmp_path), "--json-out", str(json_out), *argv])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not json_out.exists()


def test_worker_counts_parse_in_order() -> None:
    assert parse_workers("1,2,4") == [1, 2, 4]
    assert parse_workers("4, 1") == [4, 1]


def test_generated_segments_are_the_collections_chunks_and_turns(tmp_path: Path) -> None:
    segments = generated_segments(tmp_path, 3)
    assert segments.num_rows > 3
    assert set(segments.column("kind").to_pylist()) <= {"chunk", "turn"}
    assert len(set(segments.column("doc_id").to_pylist())) == 4, "3 documents, 1 conversation"


@pytest.mark.slow
def test_a_tiny_run_reports_every_runner_identical(tmp_path: Path) -> None:
    json_out = tmp_path / "runners.json"
    argv = ["bench", "runners", "--workers", "1", "--documents", "2", "--home", str(tmp_path)]
    assert main([*argv, "--work", str(tmp_path), "--json-out", str(json_out)]) == 0
    result = json.loads(json_out.read_text())
    assert result["documents"] == 2 and result["segments"] > 0
    runs = [(r["runner"], r["workers"], r["identical"]) for r in result["runs"]]
    assert runs == [("DirectRunner", 1, True), ("DaskRunner", 1, True)]
    baseline, dask = result["runs"]
    assert baseline["ratio"] == {"cold": 1.0, "warm": 1.0}
    for run in result["runs"]:
        assert all(run["seconds"][p] > 0 and run["per_s"][p] > 0 for p in ("cold", "warm"))
    assert dask["cluster_start_s"] > 0
    assert dask["ratio"]["warm"] == pytest.approx(dask["per_s"]["warm"] / baseline["per_s"]["warm"])
    assert not list(tmp_path.glob("tmp*")), "the temporary work folder is removed"
