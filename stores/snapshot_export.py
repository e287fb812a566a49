"""Writing a snapshot's tables (`stores.snapshot_tables`) to a folder in one of the
export formats: `parquet` (one file per table, typed with `schemas.export`), `graphml`
or `csv` (neo4j-admin's import layout; `transforms.graph_export`).

Each file is written beside its final name and renamed into place, so a reader never sees
half a file; the bytes depend only on the snapshot's rows, so an unchanged snapshot
exports to identical files."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stores.snapshot_tables import snapshot_tables
from stores.snapshots import Snapshot
from stores.workspace import Workspace
from transforms.graph_export import graphml, neo4j_csv


@dataclass
class ExportReport:
    """What an export wrote: files, rows per table, and the seconds spent reading them."""

    files: list[Path] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    read_s: float = 0.0


def write_export(workspace: Workspace, snapshot: Snapshot, fmt: str, out: Path) -> ExportReport:
    """Export `snapshot` as `fmt` into the folder `out` (created)."""
    started = time.perf_counter()
    tables = snapshot_tables(workspace, snapshot)
    report = ExportReport(
        rows={name: table.num_rows for name, table in tables.items()},
        read_s=time.perf_counter() - started,
    )
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        for name, table in tables.items():
            report.files.append(_write(out / f"{name}.parquet", lambda p, t=table: _parquet(t, p)))
    elif fmt == "graphml":
        content = graphml(tables["entities"], tables["fact_versions"])
        report.files.append(_write(out / "graph.graphml", lambda p: p.write_bytes(content)))
    elif fmt == "csv":
        for name, content in neo4j_csv(tables).items():
            report.files.append(_write(out / name, lambda p, c=content: p.write_bytes(c)))
    else:
        raise ValueError(f"unknown export format {fmt!r}; choose parquet, graphml or csv")
    return report


def _parquet(table: pa.Table, path: Path) -> None:
    pq.write_table(table, path, compression="zstd")


def _write(path: Path, write: object) -> Path:
    """Run `write(staging_path)`, then rename the staging file to `path`."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write(staging)  # type: ignore[operator]
    os.replace(staging, path)
    return path
