"""Processes that share a workspace: instance set-up under a lock, the instance's pool
granularity, and the file-lock slots that bound LLM stages across backfill workers."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import yaml

from dagster_project.automation.slots import held_slot
from dagster_project.build import ensure_instance_config

OPEN_INSTANCE = (
    "import sys\n"
    "from dagster_project.build import prepare_instance\n"
    "from stores.workspace import Workspace\n"
    "prepare_instance(Workspace.at(sys.argv[1])).get_runs(limit=1)\n"
)

HOLD_SLOT = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from dagster_project.automation.slots import held_slot\n"
    "with held_slot(Path(sys.argv[1]), 1):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(60)\n"
)


def test_two_processes_open_one_fresh_instance_together(tmp_path):
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster")}
    for attempt in range(2):  # unlocked, two set-ups raced about every other time
        home = tmp_path / f"home{attempt}"
        env["DAGSTER_HOME"] = str(home / "dagster")
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_INSTANCE, str(home)],
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err[-2000:]


def test_instance_config_gains_run_granularity_and_keeps_the_rest(tmp_path):
    config = tmp_path / "dagster.yaml"
    config.write_text("telemetry:\n  enabled: true\nrun_queue:\n  max_concurrent_runs: 3\n")
    ensure_instance_config(config)
    loaded = yaml.safe_load(config.read_text())
    assert loaded["concurrency"] == {"pools": {"granularity": "run"}}
    assert loaded["telemetry"] == {"enabled": True}
    assert loaded["run_queue"] == {"max_concurrent_runs": 3}


def test_a_slot_is_exclusive_and_freed_when_its_holder_dies(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_SLOT, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with held_slot(tmp_path, 2) as number:  # the second of two slots is free
            assert number == 1
        started = time.monotonic()
        holder.kill()
        with held_slot(tmp_path, 1) as number:
            assert number == 0
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
