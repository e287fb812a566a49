"""What every Beam stage is made of: its input shards read with each row counted done in
the stage's progress file (`ReadStageInput`, so the command line can show how many of a
stage's rows are done while it runs, `transforms.progress`), and its model steps run on
batches of rows (`Batched`).

The progress file is named by the pipeline option `--kgmem_progress_file`, which the
launcher sets (`pipelines.launcher`): it is a local file of the workspace folder, while
the input shards may be under a data URL (`s3://...`), so it cannot be derived from
where the input is. An option travels with the pipeline to whatever builds it, where a
module-level registry would not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apache_beam as beam
from apache_beam.io import parquetio
from apache_beam.options.pipeline_options import PipelineOptions

from transforms.progress import Counter

PROGRESS_FLAG = "--kgmem_progress_file"


class StageProgressOptions(PipelineOptions):
    """`--kgmem_progress_file PATH`: where a stage run counts its rows done."""

    @classmethod
    def _add_argparse_args(cls, parser: object) -> None:
        parser.add_argument(  # type: ignore[attr-defined]
            PROGRESS_FLAG, default=None, help="kgmem stage progress file (set by the launcher)"
        )


class ReadStageInput(beam.PTransform):
    """The rows of a stage's input shards (`input_pattern`, as `write_input` returns it).

    Where the pipeline's options name a progress file that exists (`launch` starts one
    with the row total), each row is counted done as it is read. Beam fuses the read with
    the stage's model step after it, so a row is read as it enters that step: the count
    runs at most a batch ahead of the model. A pipeline run on its own (the stage's command
    line) names no progress file and counts nothing."""

    def __init__(self, input_pattern: str) -> None:
        super().__init__()
        self.input_pattern = input_pattern

    def expand(self, pipeline: beam.pvalue.PBegin) -> beam.PCollection:
        rows = pipeline | "ReadParquet" >> parquetio.ReadFromParquet(self.input_pattern)
        progress = pipeline.pipeline.options.view_as(StageProgressOptions).kgmem_progress_file
        if not progress or not Path(progress).exists():
            return rows
        return rows | "CountDone" >> beam.ParDo(_CountDone(progress))


class _CountDone(beam.DoFn):
    """Passes rows on, counting them in a progress file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def setup(self) -> None:
        self.counter = Counter(Path(self.path))

    def process(self, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        self.counter.count()
        yield row

    def finish_bundle(self) -> None:
        self.counter.flush()


class Batched(beam.PTransform):
    """Rows in batches of `min_size` to `max_size` (Beam's adaptive `BatchElements`), each
    batch through `dofn`: how every model step of the build runs."""

    def __init__(self, dofn: beam.DoFn, min_size: int, max_size: int) -> None:
        super().__init__()
        self.dofn, self.min_size, self.max_size = dofn, min_size, max_size

    def expand(self, rows: beam.PCollection) -> beam.PCollection:
        return (
            rows
            | "Batch"
            >> beam.BatchElements(min_batch_size=self.min_size, max_batch_size=self.max_size)
            | "Run" >> beam.ParDo(self.dofn)
        )
