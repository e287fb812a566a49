"""`kgmem ui` passes SIGTERM on to the Dagster webserver and waits for it: the port stops
answering and no webserver process is left behind; the instance has the community modal
off."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2):
            return True
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


@pytest.mark.slow
def test_sigterm_stops_the_webserver_and_frees_the_port(tmp_path):
    port = _free_port()
    kgmem = str(Path(sys.executable).parent / "kgmem")
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    ui = subprocess.Popen(
        [kgmem, "ui", "--port", str(port), "--home", str(tmp_path / "home")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600  # minutes on a loaded 2-core machine
        while not _answers(port):
            assert ui.poll() is None and time.monotonic() < deadline, "the UI did not start"
            time.sleep(1)
        webserver = _children(ui.pid)
        assert webserver
        ui.send_signal(signal.SIGTERM)
        assert ui.wait(60) == 0
        assert not _answers(port)  # subprocess.call left the webserver serving
        for pid in webserver:
            assert (
                not Path(f"/proc/{pid}").exists()
                or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
            )
    finally:
        if ui.poll() is None:
            ui.kill()
    config = yaml.safe_load((tmp_path / "home" / "dagster" / "dagster.yaml").read_text())
    assert config["nux"] == {"enabled": False}
