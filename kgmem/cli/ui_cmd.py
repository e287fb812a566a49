"""`kgmem ui`: the Dagster webserver on 127.0.0.1 with this project and workspace loaded."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys

from kgmem.cli.common import add_home, console
from stores.workspace import HOME_ENV, Workspace


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    ui = commands.add_parser("ui", help="start the Dagster webserver on 127.0.0.1")
    ui.add_argument("--port", type=int, default=3000)
    add_home(ui)
    return ui


def run(args: argparse.Namespace) -> int:
    from dagster_project.build import prepare_instance

    workspace = Workspace.at(args.home)
    os.environ[HOME_ENV] = str(workspace.root)
    prepare_instance(workspace)
    command = [sys.executable, "-m", "dagster_webserver", "-m", "dagster_project.definitions",
               "-h", "127.0.0.1", "-p", str(args.port)]  # fmt: skip
    console.print(f"Dagster UI on http://127.0.0.1:{args.port} (workspace {workspace.root})")
    return run_until_stopped(command)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
STOP_GRACE_SECONDS = 10.0
"""How long the webserver gets to stop after the signal is passed on, before it is killed."""


def run_until_stopped(command: list[str]) -> int:
    """Run `command` as a child process until it ends, or until this process gets SIGINT
    or SIGTERM: the signal is passed on to the child, which is waited for (killed after
    `STOP_GRACE_SECONDS`), so that no webserver keeps the port after `kgmem ui` is
    stopped. The child's exit status, or 0 when stopped by a signal."""
    child = subprocess.Popen(command)
    stopped: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        stopped.append(signum)
        child.send_signal(signum)

    previous = {number: signal.signal(number, forward) for number in STOP_SIGNALS}
    try:
        status = child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if child.poll() is None:  # this process is ending for another reason
            child.terminate()
        try:
            child.wait(STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    return 0 if stopped else status
