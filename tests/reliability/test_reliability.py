"""The reliability suite: every kind of bad input handled cleanly, a killed build re-run to
the identical snapshot, queries and builds side by side, and no record lost."""

from __future__ import annotations

import shutil

import pytest

from benchmarks.bad_arguments import BAD_ARGUMENTS
from benchmarks.bad_inputs import BAD_INPUTS, RECOVERED_INPUTS
from benchmarks.reliability import (
    ReliabilityReport,
    check_bad_arguments,
    check_bad_inputs,
    run_reliability,
)
from kgmem.cli.app import main
from tests.conftest import SAMPLE

DOCS = SAMPLE / "documents"
TINY = ["2022-03-01-inkwell-3000-price-cut.md", "2022-07-01-marcus-bennett-ceo.md"]


def test_every_kind_of_bad_input_is_quarantined_and_nothing_is_lost(tmp_path):
    report = ReliabilityReport()
    check_bad_inputs(tmp_path, report)
    assert report.bad_inputs_tried == len(BAD_INPUTS) + len(RECOVERED_INPUTS)
    assert len(BAD_INPUTS) >= 26 and len(RECOVERED_INPUTS) >= 7
    assert report.problems == []
    assert report.bad_inputs_handled == report.bad_inputs_tried
    assert report.records_lost == 0


@pytest.mark.slow
def test_every_kind_of_bad_argument_is_refused_before_the_first_stage(tmp_path):
    report = ReliabilityReport()
    check_bad_arguments(tmp_path, [DOCS], report)
    assert report.problems == []
    assert report.bad_arguments_tried == len(BAD_ARGUMENTS) >= 9
    assert report.bad_arguments_refused == report.bad_arguments_tried


@pytest.mark.slow
def test_kill_rerun_queries_and_builds_side_by_side(tmp_path):
    corpus = []
    for name in TINY:
        folder = tmp_path / "corpus" / name.removesuffix(".md")
        folder.mkdir(parents=True)
        shutil.copy(DOCS / name, folder / name)
        corpus.append(folder)
    report = run_reliability(
        tmp_path / "work", corpus, ["entity_mentions"], ["Who is the CEO of Acme?"], threads=2
    )
    assert report.problems == []
    assert (report.kills, report.identical_reruns) == (1, 1)
    assert report.concurrent_queries > 0 and report.failed_queries == 0
    assert (report.concurrent_builds, report.failed_builds) == (3, 0)
    assert report.records_lost == 0


def test_bench_reliability_refuses_an_unknown_stage(tmp_path, capsys):
    argv = ["bench", "reliability", "--input", str(DOCS), "--kill-stages", "no_such_stage"]
    assert main(argv) == 2
    assert "unknown stage(s) no_such_stage" in capsys.readouterr().err
