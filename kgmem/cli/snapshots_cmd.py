"""`kgmem snapshots`: the immutable snapshots of a workspace, newest first."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from kgmem.cli.common import add_home, out
from stores.workspace import Workspace


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    snapshots = commands.add_parser("snapshots", help="list memory snapshots")
    snapshots.add_argument("--collection", help="only this collection")
    snapshots.add_argument("--json", action="store_true", help="machine-readable output")
    add_home(snapshots)
    return snapshots


def run(args: argparse.Namespace) -> int:
    from memory.answers import snapshot_records
    from stores.snapshots import list_snapshots

    snapshots = list_snapshots(Workspace.at(args.home).connect(read_only=True), args.collection)
    if args.json:
        print(json.dumps(snapshot_records(snapshots), indent=2))
        return 0
    table = Table(title="snapshots")
    for column in ("snapshot", "collection", "created", "content hash", "sources", "counts"):
        table.add_column(column)
    for s in snapshots:
        counts = ", ".join(f"{k} {v}" for k, v in s.counts.items())
        created = s.created_at.isoformat(timespec="seconds")
        sources = ", ".join(s.source_partitions)
        table.add_row(s.snapshot_id, s.collection, created, s.content_hash[:16], sources, counts)
    out.print(table)
    return 0
