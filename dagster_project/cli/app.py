"""Argument parsing and dispatch: every command module adds its parser and runs itself."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from dagster_project.cli import (
    backfill_cmd,
    bench_cmd,
    build_cmd,
    entities_cmd,
    eval_cmd,
    facts_cmd,
    query_cmd,
    snapshots_cmd,
    train_cmd,
    ui_cmd,
)
from dagster_project.cli.common import console
from memory.workspace import HOME_ENV, Workspace

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
    ui_cmd,
)


def parser() -> argparse.ArgumentParser:
    import dagster_project.cli as package

    root = argparse.ArgumentParser(
        prog="kgmem",
        description=(package.__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(package.__doc__ or "").split("\n\n", 1)[-1],
    )
    commands = root.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands).set_defaults(run=command.run)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "home", None):
        os.environ[HOME_ENV] = str(Workspace.at(args.home).root)
    try:
        return args.run(args)
    except (FileNotFoundError, LookupError, ValueError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
