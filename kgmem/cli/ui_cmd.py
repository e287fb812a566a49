"""`kgmem ui`: the Dagster webserver on 127.0.0.1 with this project and workspace loaded."""

from __future__ import annotations

import argparse
import os
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
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 0
