"""A stage's input is read with each row counted in the progress file its options name."""

from __future__ import annotations

import apache_beam as beam
import pyarrow as pa
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipelines.parquet_io import write_input
from pipelines.stage_input import PROGRESS_FLAG, ReadStageInput
from transforms.progress import read_progress, stage_progress_file, start_progress

ROWS = [{"segment_id": f"s{i}", "text": f"text {i}"} for i in range(7)]


def _read(folder, flags=()):
    pattern = write_input(pa.Table.from_pylist(ROWS), folder / "input", shard_rows=3)
    with TestPipeline(options=PipelineOptions(list(flags))) as p:
        rows = p | ReadStageInput(pattern) | beam.Map(lambda r: r["segment_id"])
        assert_that(rows, equal_to([r["segment_id"] for r in ROWS]))


def test_rows_are_counted_in_the_progress_file_the_options_name(tmp_path):
    progress = stage_progress_file(tmp_path / "progress" / "entity_mentions")
    start_progress(progress, len(ROWS), "rows")
    _read(tmp_path / "data", [f"{PROGRESS_FLAG}={progress}"])
    found = read_progress(progress)
    assert (found.done, found.total) == (7, 7)


def test_a_pipeline_run_on_its_own_counts_nothing(tmp_path):
    _read(tmp_path / "standalone")
    assert not stage_progress_file(tmp_path / "standalone").exists()
    assert list((tmp_path / "standalone").iterdir()) == [tmp_path / "standalone" / "input"]
