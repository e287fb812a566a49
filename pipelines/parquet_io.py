"""Reading and writing the sharded Parquet files that Beam stages exchange.

Inputs are written as shards of at most `shard_rows` rows (`part-00000-of-00004.parquet`,
...), each with row groups of at most `ROW_GROUP_ROWS`, so `ReadFromParquet` over the glob
hands a runner several splits to spread over its workers; stage outputs are sharded by the
runner (`WriteToParquet` with `num_shards=0`). The default shard size is a choice: about
a few MB of segment text per shard, small enough that a collection of a few thousand
segments already gives a cluster several splits, large enough that per-file overhead stays
negligible.
"""

from __future__ import annotations

import glob
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_SHARD_ROWS = 2_000
ROW_GROUP_ROWS = 500


def write_input(table: pa.Table, folder: Path, shard_rows: int = DEFAULT_SHARD_ROWS) -> str:
    """Replace `folder` with `table` as Parquet shards of at most `shard_rows` rows (one
    shard when empty); return their glob pattern."""
    if shard_rows < 1:
        raise ValueError("shard_rows must be >= 1")
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shards = max(1, -(-table.num_rows // shard_rows))
    for i in range(shards):
        part = table.slice(i * shard_rows, shard_rows)
        path = folder / f"part-{i:05d}-of-{shards:05d}.parquet"
        pq.write_table(part, path, row_group_size=min(shard_rows, ROW_GROUP_ROWS))
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
