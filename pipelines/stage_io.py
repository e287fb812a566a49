"""What every Beam stage is made of, in the primitives every Beam runner translates: its
input read as splits (`ReadStageInput`, each row counted done in the stage's progress file
so the command line can show how far a stage is, `transforms.progress`), its outputs
written as Parquet shards (`WriteShards`), a step's several outputs told apart by tag
(`by_tag`) and one last transform that every output reaches (`end`).

Only `Create`, single-output `ParDo` (`Map`, `FlatMap`), `GroupByKey`, `Flatten` and
`Reshuffle` are used, because they are what Beam 2.77's `DaskRunner` translates
(`apache_beam/runners/dask/transform_evaluator.py`). What it does not, and how each is
avoided here (each was seen on a `LocalCluster` of two worker processes):

- `beam.io.Read` (`ReadFromParquet`, any source; `Impulse` too) has no translation: the
  step gets no input and pipeline construction fails with `'NoneType' object has no
  attribute 'map'`. The input is read instead by a `ParDo` over splits made with `Create`
  (`input_splits`: a file and a row range), the one primitive that starts a Dask bag. The
  splits are computed when the pipeline is built, from the Parquet footers.
- Outputs a DoFn emits in `finish_bundle` are dropped: the runner collects a bundle's
  outputs before it calls `finish_bundle`. `BatchElements` emits its last batch there
  (seven elements in bundles of two came out as no batch at all), and so does the
  bundle writer of `WriteToParquet` / `WriteToText`: their finalize step sees no files and
  writes one empty shard, the rows silently lost. So batches are made as the input is
  read (each split is one batch of `batch_rows` rows, fixed rather than adaptive), and
  `WriteShards` writes in `process`, after a `GroupByKey` on the shard.
- Tagged outputs (`ParDo(...).with_outputs(...)`) are not told apart: every tag's
  elements land in one Dask bag that each consumer reads whole. A step with several
  outputs yields `(tag, value)` pairs instead, which `by_tag` splits with one `FlatMap`
  per tag.
- Only the bag of the last transform applied is computed
  (`dask.optimize(list(bags.values())[-1])`): a second sink that the last transform does not
  depend on never runs, silently. `end` joins everything a stage writes into one last
  `Flatten`.
- Side inputs are computed inside a worker's task (`list(bag)`), so none are used
  (`CombineGlobally` is applied `without_defaults`, whose default needs one).

The runner also runs `setup` and `teardown` once per partition (bundle) rather than once
per DoFn instance; the model loaders cache per process, so a worker loads each model once.
On the other runners `Reshuffle` after the splits spreads them over workers (the Dask
runner ignores it: its partitions are the `Create`'s, one split each, see
`pipelines.options`).

The progress file is named by the pipeline option `--kgmem_progress_file`, which the
launcher sets (`pipelines.launcher`): it is a local file of the workspace folder, while
the input shards may be under a data URL (`s3://...`), so it cannot be derived from
where the input is. An option travels with the pipeline to whatever builds it, where a
module-level registry would not.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.parquet_io import ROW_GROUP_ROWS
from transforms.progress import Counter

Split = tuple[str, int, int]
"""A file, the first row and the number of rows of one piece of a stage's input."""
PROGRESS_FLAG = "--kgmem_progress_file"


class StageProgressOptions(PipelineOptions):
    """`--kgmem_progress_file PATH`: where a stage run counts its rows done."""

    @classmethod
    def _add_argparse_args(cls, parser: object) -> None:
        parser.add_argument(  # type: ignore[attr-defined]
            PROGRESS_FLAG, default=None, help="kgmem stage progress file (set by the launcher)"
        )


def input_files(input_pattern: str) -> list[str]:
    """The files matching `input_pattern` (a local or remote glob), sorted."""
    matched = FileSystems.match([input_pattern])[0].metadata_list
    return sorted(m.path for m in matched)


def input_splits(files: list[str], split_rows: int) -> list[Split]:
    """`files` cut into splits of at most `split_rows` rows (none for an empty file)."""
    if split_rows < 1:
        raise ValueError("split_rows must be >= 1")
    splits = []
    for path in files:
        with _open(path) as f:
            rows = pq.read_metadata(f).num_rows
        starts = range(0, rows, split_rows)
        splits.extend((path, start, min(split_rows, rows - start)) for start in starts)
    return splits


def read_split(split: Split) -> list[dict[str, Any]]:
    """The rows of `split`, reading only the row groups it overlaps."""
    path, start, count = split
    with _open(path) as f:
        parquet = pq.ParquetFile(f)
        groups, first_row, offset = [], None, 0
        for i in range(parquet.num_row_groups):
            size = parquet.metadata.row_group(i).num_rows
            if offset < start + count and offset + size > start:
                groups.append(i)
                first_row = offset if first_row is None else first_row
            offset += size
        table = parquet.read_row_groups(groups) if groups else parquet.schema_arrow.empty_table()
    return table.slice(start - (first_row or 0), count).to_pylist()


def _open(path: str) -> BinaryIO:
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


def filesystem_options(pipeline: beam.Pipeline) -> dict[str, Any]:
    """The options of `pipeline` that were set, as a plain dict a DoFn can carry."""
    return pipeline.options.get_all_options(drop_default=True, retain_unknown_options=True)


class FileSystemsDoFn(beam.DoFn):
    """Base of the DoFns that read or write through Beam's `FileSystems`: `setup` hands
    them the pipeline's options in the worker's process. Beam sets them only where a
    `Pipeline` object is made (the launching process, a portable runner's SDK workers); a
    Dask worker gets none, and the S3 filesystem then has no endpoint, region or
    credentials ("Must provide one of client or options")."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options

    def setup(self) -> None:
        FileSystems.set_options(PipelineOptions.from_dictionary(self.options))


class _ReadSplit(FileSystemsDoFn):
    """A split -> the list of its rows (`read_split`)."""

    def process(self, split: Split) -> Iterator[list[dict[str, Any]]]:
        yield read_split(split)


class ReadStageInput(beam.PTransform):
    """The rows of a stage's input shards (`input_pattern`, as `write_input` returns it):
    with `batch_rows`, as batches of at most that many rows (one per split, in file
    order), else row by row (splits of `ROW_GROUP_ROWS`). `num_files` is how many shards
    matched, the number of output shards a stage writes (`WriteShards`).

    Where the pipeline's options name a progress file that exists (`launch` starts one
    with the row total), each row is counted done as it is read. Beam fuses the read with
    the stage's model step after it, so a row is read as it enters that step: the count
    runs at most a batch ahead of the model. A pipeline run on its own (the stage's command
    line) names no progress file and counts nothing."""

    def __init__(self, input_pattern: str, batch_rows: int | None = None) -> None:
        super().__init__()
        self.input_pattern = input_pattern
        self.batch_rows = batch_rows
        self.files = input_files(input_pattern)

    @property
    def num_files(self) -> int:
        return max(1, len(self.files))

    def expand(self, pipeline: beam.pvalue.PBegin) -> beam.PCollection:
        splits = input_splits(self.files, self.batch_rows or ROW_GROUP_ROWS)
        batches = (
            pipeline
            | "Splits" >> beam.Create(splits)
            | "Spread" >> beam.Reshuffle()
            | "ReadSplit" >> beam.ParDo(_ReadSplit(filesystem_options(pipeline.pipeline)))
        )
        progress = pipeline.pipeline.options.view_as(StageProgressOptions).kgmem_progress_file
        if progress and Path(progress).exists():
            batches = batches | "CountDone" >> beam.ParDo(_CountDone(progress))
        if self.batch_rows is None:
            return batches | "Rows" >> beam.FlatMap(lambda batch: batch)
        return batches


class _CountDone(beam.DoFn):
    """Passes batches of rows on, counting their rows in a progress file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def setup(self) -> None:
        self.counter = Counter(Path(self.path))

    def process(self, batch: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
        self.counter.count(len(batch))
        yield batch

    def finish_bundle(self) -> None:
        self.counter.flush()


def shard_of(row: dict[str, Any], num_shards: int) -> int:
    """The output shard of `row`: a checksum of its fields, the same in every process."""
    return zlib.crc32(_row_key(row).encode()) % num_shards


def _row_key(row: dict[str, Any]) -> str:
    return repr(sorted(row.items()))


def shard_path(prefix: str, shard: int, num_shards: int) -> str:
    """`<prefix>-00003-of-00008.parquet`, the file of output shard `shard`."""
    return f"{prefix}-{shard:05d}-of-{num_shards:05d}.parquet"


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to `path` through a temporary file renamed over it (a rename replaces
    the file on a local file system, a copy does on object stores), so a reader never
    sees half a file and a retried write replaces the first."""
    temporary = f"{path}.{zlib.crc32(data):08x}.tmp"
    with FileSystems.create(temporary, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write(data)
    FileSystems.rename([temporary], [path])


class _WriteShard(FileSystemsDoFn):
    """Writes one shard's rows, sorted, as one Parquet file; yields its path."""

    def __init__(
        self, prefix: str, schema: pa.Schema, num_shards: int, options: dict[str, Any]
    ) -> None:
        super().__init__(options)
        self.prefix, self.schema, self.num_shards = prefix, schema, num_shards

    def process(self, keyed: tuple[int, list[dict[str, Any]]]) -> Iterator[str]:
        shard, rows = keyed
        table = pa.Table.from_pylist(sorted(rows, key=_row_key), schema=self.schema)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, row_group_size=ROW_GROUP_ROWS)
        path = shard_path(self.prefix, shard, self.num_shards)
        write_atomically(path, sink.getvalue().to_pybytes())
        yield path


class WriteShards(beam.PTransform):
    """Rows -> Parquet files `<prefix>-NNNNN-of-MMMMM.parquet` of `schema`: each row goes
    to the shard its checksum picks (`shard_of`), each shard is one file written whole
    after a `GroupByKey`, its rows sorted, so a file's content does not depend on the
    runner or on bundling, and a retried shard rewrites the same file. Shards without rows
    write no file. The output is the paths written."""

    def __init__(self, prefix: str, schema: pa.Schema, num_shards: int) -> None:
        super().__init__()
        if num_shards < 1:
            raise ValueError("num_shards must be >= 1")
        self.prefix, self.schema, self.num_shards = prefix, schema, num_shards

    def expand(self, rows: beam.PCollection) -> beam.PCollection:
        num_shards = self.num_shards
        return (
            rows
            | "ShardKey" >> beam.Map(lambda row: (shard_of(row, num_shards), row))
            | "GroupByShard" >> beam.GroupByKey()
            | "WriteShard"
            >> beam.ParDo(
                _WriteShard(self.prefix, self.schema, num_shards, filesystem_options(rows.pipeline))
            )
        )


def by_tag(tagged: beam.PCollection, tags: tuple[str, ...]) -> dict[str, beam.PCollection]:
    """The `(tag, value)` pairs of `tagged` split into one collection of values per tag."""
    return {tag: tagged | f"Select_{tag}" >> beam.FlatMap(_select, tag) for tag in tags}


def _select(pair: tuple[str, Any], tag: str) -> Iterator[Any]:
    if pair[0] == tag:
        yield pair[1]


def end(*written: beam.PCollection) -> beam.PCollection:
    """The last transform of a stage with several outputs: the paths every writer wrote,
    in one collection, so that a runner computing only the last transform runs them all."""
    return written | "Written" >> beam.Flatten()
