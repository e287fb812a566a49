"""Reading and writing the sharded Parquet files that Beam stages exchange.

Inputs are written as shards of at most `shard_rows` rows (`part-00000-of-00004.parquet`,
...), each with row groups of at most `ROW_GROUP_ROWS`, so `ReadFromParquet` over the glob
hands a runner several splits to spread over its workers; stage outputs are sharded by the
runner (`WriteToParquet` with `num_shards=0`). The default shard size is a choice: about
a few MB of segment text per shard, small enough that a collection of a few thousand
segments already gives a cluster several splits, large enough that per-file overhead stays
negligible.

Folders and prefixes are locations of `stores.data_url`: local paths or `s3://` URLs (a
workspace with a data URL), read and written through pyarrow's filesystems here and
through Beam's filesystems inside the pipelines, so a stage's shards are where every
worker can reach them.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from stores.data_url import delete, delete_folder, filesystem, is_remote, join, list_files

DEFAULT_SHARD_ROWS = 2_000
ROW_GROUP_ROWS = 500


def write_input(table: pa.Table, folder: str | Path, shard_rows: int = DEFAULT_SHARD_ROWS) -> str:
    """Replace `folder` with `table` as Parquet shards of at most `shard_rows` rows (one
    shard when empty); return their glob pattern."""
    if shard_rows < 1:
        raise ValueError("shard_rows must be >= 1")
    folder = str(folder)
    delete_folder(folder)
    fs, path = filesystem(folder)
    fs.create_dir(path)
    shards = max(1, -(-table.num_rows // shard_rows))
    for i in range(shards):
        part = table.slice(i * shard_rows, shard_rows)
        name = f"part-{i:05d}-of-{shards:05d}.parquet"
        pq.write_table(
            part, f"{path}/{name}", row_group_size=min(shard_rows, ROW_GROUP_ROWS), filesystem=fs
        )
    return join(folder, "*.parquet")


def _shards(prefix: str | Path) -> list[str]:
    """The shard files written under `prefix` (`<folder>/<name>*.parquet`), sorted."""
    folder, _, name = str(prefix).rpartition("/")
    return [
        p
        for p in list_files(folder)
        if p.rpartition("/")[2].startswith(name) and p.endswith(".parquet")
    ]


def read_shards(prefix: str | Path, schema: pa.Schema) -> pa.Table:
    """Concatenate every shard written under `prefix` (an empty table if there are none)."""
    tables = []
    for shard in _shards(prefix):
        fs, path = filesystem(shard)
        tables.append(pq.read_table(path, schema=schema, filesystem=fs))
    return pa.concat_tables(tables) if tables else schema.empty_table()


def clear_shards(prefix: str | Path) -> None:
    """Remove shards of an earlier run so a re-run never mixes outputs (and make the
    local folder a runner writes them to)."""
    folder = str(prefix).rpartition("/")[0]
    if not is_remote(folder):
        Path(folder).mkdir(parents=True, exist_ok=True)
    delete(_shards(prefix))
