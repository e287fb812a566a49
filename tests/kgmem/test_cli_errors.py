"""Failures of the command line are one line and exit status 2 (`--debug`: the traceback, and
still 2); a build's arguments, environment and models are checked before its first stage, the
light ones before Dagster is imported, leaving nothing in the workspace."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dagster_project.build import root_cause
from kgmem.cli import snapshots_cmd
from kgmem.cli.app import main
from tests.import_probe import loaded_after

SAMPLE = str(Path(__file__).parents[2] / "sample_corpus" / "documents")


def _kgmem(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "kgmem"), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _one_line_error(run: subprocess.CompletedProcess, *words: str) -> None:
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and lines[0].startswith("error:"), run.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--collection", "Bad Name", "--input", SAMPLE], ["invalid collection name"]),
        (["--collection", "ok", "--input", "/no/such/input"], ["--input /no/such/input"]),
    ],
)
def test_argument_errors_answer_before_dagster_and_leave_no_logs(tmp_path, argv, words):
    home = tmp_path / "home"
    started = time.monotonic()
    run = _kgmem("build", *argv, "--home", str(home))
    assert time.monotonic() - started < 5  # 17 s before: Dagster was imported first
    _one_line_error(run, *words)
    assert not home.exists()
    code = (
        "from kgmem.cli.app import main\n"
        f"assert main(['build', *{argv!r}, '--home', {str(home)!r}]) == 2\n"
    )
    assert loaded_after(code, ("dagster", "apache_beam", "duckdb")) == []


def test_an_empty_input_folder_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    run = _kgmem("build", "--collection", "c", "--input", str(tmp_path / "empty"),
                 "--home", str(tmp_path / "home"))  # fmt: skip
    _one_line_error(run, "holds no file")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "env", "words"),
    [
        (["--spacy-model", "nosuch"], {}, ["--spacy-model nosuch"]),
        (["--encoder", "/missing/dir"], {}, ["--encoder /missing/dir", "no such"]),
        (["--chunk-tokens", "0"], {}, ["chunk_tokens", "greater than 0"]),
        (["--chunk-tokens", "-5"], {}, ["chunk_tokens"]),
        ([], {"KGMEM_MAX_FILE_MB": "abc"}, ["KGMEM_MAX_FILE_MB", "not a number"]),
        ([], {"KGMEM_ENCODER_THREADS": "many"}, ["KGMEM_ENCODER_THREADS"]),
    ],
)
def test_bad_models_settings_and_environment_fail_before_the_first_stage(
    tmp_path, flags, env, words
):
    home = tmp_path / "home"
    run = _kgmem("build", "--collection", "c", "--input", SAMPLE, "--home", str(home), *flags,
                 env={**os.environ, **env})  # fmt: skip
    _one_line_error(run, *words)
    assert not (home / "warehouse.duckdb").exists()  # no stage ran


def test_an_unexpected_error_is_one_line_with_the_traceback_in_the_log(
    tmp_path, capsys, monkeypatch
):
    def boom(args):
        raise RuntimeError("first line\nsecond line")

    home = tmp_path / "home"
    monkeypatch.setattr(snapshots_cmd, "run", boom)
    assert main(["snapshots", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert main(["--debug", "snapshots", "--home", str(home)]) == 2  # was 1: uncaught
    debug = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "error: RuntimeError: first line (details in logs/kgmem.log of the workspace)"
    ]
    assert "Traceback" in (home / "logs" / "kgmem.log").read_text()
    assert "Traceback" in debug and "second line" in debug


def test_root_cause_names_the_innermost_error_in_one_line():
    from dagster._utils.error import SerializableErrorInfo

    inner = SerializableErrorInfo("OSError: spaCy model 'x' is missing\n", [], "OSError")
    outer = SerializableErrorInfo(
        'dagster._core.errors.DagsterExecutionStepExecutionError: Error occurred while '
        'executing op "entity_mentions":\n', [], "DagsterExecutionStepExecutionError", inner
    )  # fmt: skip
    assert root_cause(outer) == "OSError: spaCy model 'x' is missing"


@pytest.mark.slow
def test_ctrl_c_during_a_build_stops_it_in_one_line_with_exit_130(tmp_path):
    build = subprocess.Popen(
        [str(Path(sys.executable).parent / "kgmem"), "build", "--collection", "c",
         "--input", SAMPLE, "--home", str(tmp_path / "home"), "--fusion-encoder", "none"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    lines = []
    for line in build.stderr:  # not a terminal: a line per stage start
        lines.append(line)
        if "entity_mentions started" in line:
            break
    build.send_signal(signal.SIGINT)
    started = time.monotonic()
    rest = build.stderr.read()
    assert build.wait(120) == 130
    assert time.monotonic() - started < 30  # 221 lines and minutes more before
    errors = [x for x in rest.splitlines() if x.strip() and "c: " not in x]  # not progress
    assert len(errors) == 1 and errors[0].startswith("interrupted"), rest
