"""Reading and writing the sharded Parquet files that Beam stages exchange."""

from __future__ import annotations

import glob
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def write_input(table: pa.Table, folder: Path) -> str:
    """Replace `folder` with one Parquet file holding `table`; return its glob pattern."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    pq.write_table(table, folder / "part-00000.parquet")
    return str(folder / "*.parquet")


def read_shards(prefix: Path, schema: pa.Schema) -> pa.Table:
    """Concatenate every shard written under `prefix` (an empty table if there are none)."""
    paths = sorted(glob.glob(f"{prefix}*.parquet"))
    tables = [pq.read_table(p, schema=schema) for p in paths]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def clear_shards(prefix: Path) -> None:
    """Remove shards of an earlier run so a re-run never mixes outputs."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    for path in glob.glob(f"{prefix}*.parquet"):
        Path(path).unlink()
