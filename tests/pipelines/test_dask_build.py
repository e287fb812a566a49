"""The sample build on Beam's Dask runner, with a LocalCluster of two worker processes
that `kgmem build` starts and closes, gives the DirectRunner build's snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.reliability import newest_hash
from kgmem.cli import main
from kgmem.cli.common import LOG_FILE
from tests.conftest import SAMPLE


@pytest.mark.slow
def test_sample_build_on_the_dask_runner_gives_the_direct_runner_snapshot(
    sample_build, tmp_path: Path
):
    workspace, _ = sample_build
    home = tmp_path / "dask_home"
    argv = ["--verbose", "build", "--collection", "sample", "--home", str(home), "--no-llm"]
    argv += ["--input", str(SAMPLE / "documents"), "--input", str(SAMPLE / "conversations")]
    assert main([*argv, "--beam-runner", "DaskRunner", "--beam-workers", "2"]) == 0
    log = (home / LOG_FILE).read_text()
    assert log.count("started a Dask LocalCluster of 2 workers") == 1, "one cluster per build"
    expected = newest_hash(workspace.root, "sample")
    assert expected and newest_hash(home, "sample") == expected
