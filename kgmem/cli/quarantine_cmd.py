"""`kgmem quarantine`: the records a build set aside, with file, record, stage and reason."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from kgmem.cli.common import add_home, out
from stores.workspace import Workspace


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    quarantine = commands.add_parser(
        "quarantine", help="list quarantined records: file, record, stage and reason"
    )
    quarantine.add_argument("--collection", help="only this collection (default: every one)")
    quarantine.add_argument("--json", action="store_true", help="machine-readable output")
    add_home(quarantine)
    return quarantine


def run(args: argparse.Namespace) -> int:
    from stores.quarantine_rows import quarantine_rows

    con = Workspace.at(args.home).connect(read_only=True)
    try:
        rows = quarantine_rows(con, args.collection)
    finally:
        con.close()
    if args.json:
        print(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return 0
    scope = f"collection {args.collection}" if args.collection else "every collection"
    if not rows:
        out.print(f"nothing quarantined in {scope}")
        return 0
    table = Table(title=f"quarantined records in {scope} ({len(rows)})")
    for column in ("collection", "stage", "file", "record", "reason"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["collection"], row["stage"], row["source_file"], row["record_ref"], row["reason"]
        )
    out.print(table)
    return 0
