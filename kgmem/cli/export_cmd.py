"""`kgmem export`: a snapshot's tables as Parquet, GraphML or neo4j-admin CSV files."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from kgmem.cli.common import add_home, out

if TYPE_CHECKING:
    from stores.snapshots import Snapshot

FORMATS = ("parquet", "graphml", "csv")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    export = commands.add_parser(
        "export",
        help="write a snapshot's entities, fact versions, segments and passage graph to files",
        description="Export exactly what a snapshot sees (its pinned LanceDB versions, its "
        "fact versions as of its recorded cutoff): parquet, one typed file per table; "
        "graphml, entities and facts as a multigraph; csv, the neo4j-admin import layout. "
        "An unchanged snapshot exports to the same bytes.",
    )
    export.add_argument("--snapshot", default="latest", help="snapshot id or `latest` (default)")
    export.add_argument("--collection", help="with `latest`: the newest of this collection")
    export.add_argument("--format", choices=FORMATS, default="parquet", help="default parquet")
    export.add_argument("--out", type=Path, required=True, help="folder to write (created)")
    add_home(export)
    return export


def run(args: argparse.Namespace) -> int:
    import contextlib

    from stores.snapshot_export import write_export
    from stores.snapshots import list_snapshots
    from stores.workspace import Workspace

    workspace = Workspace.at(args.home)
    with contextlib.closing(workspace.connect(read_only=True)) as con:
        snapshots = list_snapshots(con, args.collection)
    snapshot = choose(snapshots, args.snapshot)
    if args.out.exists() and not args.out.is_dir():
        raise ValueError(f"--out {args.out}: is a file, not a folder")
    started = time.perf_counter()
    report = write_export(workspace, snapshot, args.format, args.out)
    total = time.perf_counter() - started
    counts = ", ".join(f"{name} {rows}" for name, rows in report.rows.items())
    out.print(
        f"exported {snapshot.snapshot_id} as {args.format} to {args.out}: {counts} "
        f"({len(report.files)} files, {total:.2f} s; reading the tables {report.read_s:.2f} s)",
        highlight=False,
        soft_wrap=True,
    )
    return 0


def choose(snapshots: list[Snapshot], name: str) -> Snapshot:
    """The snapshot `--snapshot` names: `latest` (the first, newest) or an id."""
    if name == "latest":
        if not snapshots:
            raise LookupError("no snapshot yet; run `kgmem build` first")
        return snapshots[0]
    chosen = next((s for s in snapshots if s.snapshot_id == name), None)
    if chosen is None:
        known = ", ".join(s.snapshot_id for s in snapshots[:10]) or "none"
        raise LookupError(f"--snapshot {name}: no such snapshot (known: {known})")
    return chosen
