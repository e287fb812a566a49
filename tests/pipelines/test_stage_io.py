"""A stage's input is read as splits, in batches or row by row, with each row counted in
its progress file if it has one; outputs are written as whole, sorted shards; a step's
tagged pairs are split by tag."""

from __future__ import annotations

import glob
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to

from pipelines.parquet_io import read_shards, write_input
from pipelines.stage_io import (
    PROGRESS_FLAG,
    ReadStageInput,
    WriteShards,
    by_tag,
    input_files,
    input_splits,
    read_split,
    shard_path,
)
from tests.beam_testing import direct_test_pipeline
from transforms.progress import read_progress, stage_progress_file, start_progress

ROWS = [{"segment_id": f"s{i}", "text": f"text {i}"} for i in range(7)]
SCHEMA = pa.schema([("segment_id", pa.string()), ("text", pa.string())])


def _read(folder: Path, batch_rows: int | None = None, progress: Path | None = None) -> None:
    pattern = write_input(pa.Table.from_pylist(ROWS), folder / "input", shard_rows=3)
    flags = [f"{PROGRESS_FLAG}={progress}"] if progress else []
    with direct_test_pipeline(options=PipelineOptions(flags)) as p:
        rows = p | ReadStageInput(pattern, batch_rows)
        if batch_rows:
            assert_that(rows | beam.Map(len), equal_to([2, 1, 2, 1, 1]), label="sizes")
            rows = rows | beam.FlatMap(lambda batch: batch)
        ids = rows | beam.Map(lambda r: r["segment_id"])
        assert_that(ids, equal_to([r["segment_id"] for r in ROWS]))


def test_rows_are_counted_in_the_progress_file_the_options_name(tmp_path):
    progress = stage_progress_file(tmp_path / "progress" / "entity_mentions")
    start_progress(progress, len(ROWS), "rows")
    _read(tmp_path / "data", progress=progress)  # the shards elsewhere, as on a data URL
    found = read_progress(progress)
    assert (found.done, found.total) == (7, 7)


def test_batches_are_the_splits_of_each_shard_and_count_their_rows(tmp_path):
    progress = stage_progress_file(tmp_path / "segment_phrases")
    start_progress(progress, len(ROWS), "rows")
    _read(tmp_path / "segment_phrases", batch_rows=2, progress=progress)  # shards 3, 3, 1
    found = read_progress(progress)
    assert (found.done, found.total) == (7, 7)


def test_a_pipeline_run_on_its_own_counts_nothing(tmp_path):
    _read(tmp_path / "standalone")
    assert not stage_progress_file(tmp_path / "standalone").exists()
    assert list((tmp_path / "standalone").iterdir()) == [tmp_path / "standalone" / "input"]


def test_a_split_reads_only_its_rows_across_row_groups(tmp_path):
    path = tmp_path / "one.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path, row_group_size=3)
    splits = input_splits(input_files(str(tmp_path / "*.parquet")), 4)
    assert [(start, count) for _, start, count in splits] == [(0, 4), (4, 3)]
    assert [r["segment_id"] for r in read_split(splits[1])] == ["s4", "s5", "s6"]
    assert [r["segment_id"] for r in read_split((str(path), 2, 3))] == ["s2", "s3", "s4"]
    with pytest.raises(ValueError):
        input_splits([str(path)], 0)


def test_shards_are_written_whole_and_sorted_and_a_rewrite_replaces_them(tmp_path):
    prefix = str(tmp_path / "out" / "part")
    for _ in range(2):
        with direct_test_pipeline() as p:
            written = p | beam.Create(list(reversed(ROWS))) | WriteShards(prefix, SCHEMA, 3)
            assert_that(
                written | beam.Map(lambda path: Path(path).name),
                lambda names: _all_shard_names(names, tmp_path),
            )
    paths = sorted(glob.glob(f"{prefix}*"))
    assert paths == sorted(glob.glob(f"{prefix}-*-of-00003.parquet")), "no temporary left"
    for path in paths:
        ids = pq.read_table(path).column("segment_id").to_pylist()
        assert ids == sorted(ids)
    assert sorted(read_shards(Path(prefix), SCHEMA).to_pylist(), key=str) == sorted(ROWS, key=str)
    with pytest.raises(ValueError):
        WriteShards(prefix, SCHEMA, 0)


def _all_shard_names(names: list[str], tmp_path: Path) -> None:
    expected = {Path(shard_path(str(tmp_path / "out" / "part"), k, 3)).name for k in range(3)}
    assert set(names) <= expected and len(names) == len(set(names))


def test_tagged_pairs_are_split_by_tag():
    pairs = [("a", 1), ("b", 2), ("a", 3)]
    with direct_test_pipeline() as p:
        split = by_tag(p | beam.Create(pairs), ("a", "b", "c"))
        assert_that(split["a"], equal_to([1, 3]), label="a")
        assert_that(split["b"], equal_to([2]), label="b")
        assert_that(split["c"], equal_to([]), label="c")
