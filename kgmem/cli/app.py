"""Argument parsing and dispatch: every command module adds its parser and runs itself."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from kgmem.cli import (
    backfill_cmd,
    bench_cmd,
    build_cmd,
    entities_cmd,
    eval_cmd,
    export_cmd,
    facts_cmd,
    quarantine_cmd,
    query_cmd,
    serve_cmd,
    snapshots_cmd,
    train_cmd,
    ui_cmd,
)
from kgmem.cli.common import INTERRUPTED, console, report_error, route_library_logs
from stores.workspace import DATA_URL_ENV, HOME_ENV, Workspace
from transforms.gc_tuning import tune_gc

COMMANDS = (
    build_cmd,
    backfill_cmd,
    query_cmd,
    facts_cmd,
    entities_cmd,
    eval_cmd,
    train_cmd,
    bench_cmd,
    snapshots_cmd,
    quarantine_cmd,
    serve_cmd,
    export_cmd,
    ui_cmd,
)
READERS = (query_cmd.run, facts_cmd.run, snapshots_cmd.run, quarantine_cmd.run)
"""Commands that only read the workspace, so that they work on a read-only copy of it."""


def parser() -> argparse.ArgumentParser:
    import kgmem.cli as package

    root = argparse.ArgumentParser(
        prog="kgmem",
        description=(package.__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(package.__doc__ or "").split("\n\n", 1)[-1],
    )
    root.add_argument(
        "--debug", action="store_true", help="show the traceback of an error, not one line"
    )
    root.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show library log messages and warnings too (else only in <home>/logs/kgmem.log)",
    )
    commands = root.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands).set_defaults(run=command.run)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        tune_gc()
        if getattr(args, "home", None):
            os.environ[HOME_ENV] = str(usable_home(args.home, args.run not in READERS))
        if getattr(args, "data_url", None):  # every workspace opened in this process
            os.environ[DATA_URL_ENV] = args.data_url
        route_library_logs(Workspace.at(args.home).root, args.verbose)
        return args.run(args)
    except KeyboardInterrupt:
        console.print("[red]interrupted[/red]", highlight=False)
        return INTERRUPTED
    except Exception as exc:
        return report_error(exc, args.debug)


def usable_home(home: str, writes: bool = True) -> Path:
    """The absolute workspace folder of `--home`, or a ValueError saying why it cannot be
    one: it is a file, or, for a command that `writes`, a folder (or the nearest existing
    parent) that cannot be written. A reader needs no write access: snapshots are shipped
    to query hosts and mounted read-only."""
    root = Workspace.at(home).root
    if root.exists() and not root.is_dir():
        raise ValueError(f"--home {home}: is a file, not a folder")
    if not writes:
        return root
    existing = next(p for p in (root, *root.parents) if p.exists())
    if not os.access(existing, os.W_OK):
        raise ValueError(f"--home {home}: {existing} is not writable")
    return root


if __name__ == "__main__":
    sys.exit(main())
