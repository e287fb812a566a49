"""The one Beam launcher of the build: hand a stage's rows to Beam as Parquet shards, run
its pipeline on the configured runner, read the sharded output back.

`launch` runs any stage pipeline over an Arrow table; `run_beam_stage` does so for the
documents a per-document stage has not processed yet and stores the output for exactly
those documents (`PendingDocuments`); `run_segment_stage` feeds it the chunks and turns
of those documents (NER, phrases). On the DaskRunner a launch uses the settings'
scheduler (`dask_address`, which a build's `BuildSettings.dask_cluster` fills in), else a
LocalCluster started for that one launch (`pipelines.dask_cluster`).

A stage's folder is a location of `stores.data_url`: with a data URL its shards are
written, read by the runner and read back on the object store, and the pipeline gets
Beam's S3 options for it; the progress file stays in the workspace folder and reaches
the pipeline as an option (`pipelines.stage_io`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apache_beam as beam
import pyarrow as pa

from pipelines.dask_cluster import run_pipeline
from pipelines.outcome import StageOutcome
from pipelines.parquet_io import clear_shards, read_shards, write_input
from pipelines.settings import BuildSettings
from pipelines.stage_io import PROGRESS_FLAG
from stores.data_url import beam_flags, join
from stores.stage_inputs import extractable_segments
from stores.warehouse import WarehouseStore
from transforms.progress import start_progress

BuildFn = Callable[[beam.Pipeline, str, str, Any], beam.PCollection]


@dataclass(frozen=True)
class PendingDocuments:
    """Documents of a collection that a stage must (re)process, and those it must drop."""

    todo: list[str]
    stale: list[str]

    @classmethod
    def of(
        cls, warehouse: WarehouseStore, collection: str, stage: str, upstream: str
    ) -> PendingDocuments:
        done, ready = warehouse.ledger(collection, stage), warehouse.ledger(collection, upstream)
        return cls(sorted(ready - done), sorted(done - ready))

    def outcome(self, rows_in: int, rows_out: int, **details: Any) -> StageOutcome:
        """The outcome of a run over these documents, with the stage's `details`."""
        return StageOutcome(
            rows_in=rows_in,
            rows_out=rows_out,
            skipped=not self.todo and not self.stale,
            details={"documents_processed": len(self.todo), **details},
        )


def launch(
    build: BuildFn,
    inputs: pa.Table,
    folder: str,
    progress: Path,
    settings: BuildSettings,
    config: object,
    outputs: Sequence[str] = (),
) -> str:
    """Run `build` over `inputs` with `config` under the stage folder `folder` and return
    its output prefix (`folder/output/part`). Earlier shards of the output and of `outputs`
    (a stage's side outputs) are cleared first; with no input rows nothing runs. The
    progress file `progress` counts the input rows done as the pipeline reads them
    (`pipelines.stage_io`)."""
    output_prefix = join(folder, "output", "part")
    for prefix in (output_prefix, *outputs):
        clear_shards(prefix)
    start_progress(progress, inputs.num_rows, "rows")
    if inputs.num_rows:
        input_pattern = write_input(inputs, join(folder, "input"), settings.parquet_shard_rows)
        flags = [*beam_flags(folder), f"{PROGRESS_FLAG}={progress}"]
        with settings.dask_cluster() as running:
            p = beam.Pipeline(options=running.beam_options(flags))
            build(p, input_pattern, output_prefix, config)
            run_pipeline(p)
    return output_prefix


def run_beam_stage(
    *,
    warehouse: WarehouseStore,
    settings: BuildSettings,
    collection: str,
    stage: str,
    pending: PendingDocuments,
    inputs: pa.Table,
    build: BuildFn,
    output_schema: pa.Schema,
    config: object | None = None,
) -> pa.Table:
    """`launch` `build` over `inputs` with `config` (default: the spaCy stage config) and
    store its output as `stage`'s rows of `pending.todo`."""
    workspace = warehouse.workspace
    prefix = launch(
        build,
        inputs,
        workspace.parquet_dir(collection, stage),
        workspace.progress_file(collection, stage),
        settings,
        config or settings.spacy_stage(),
    )
    output = read_shards(prefix, output_schema)
    warehouse.replace_documents(stage, collection, stage, pending.todo, output, pending.stale)
    return output


@dataclass(frozen=True)
class SegmentStageRun:
    """What a per-segment stage wrote, over which documents and how many segments."""

    output: pa.Table
    pending: PendingDocuments
    segments: int

    def outcome(self, **details: Any) -> StageOutcome:
        return self.pending.outcome(self.segments, self.output.num_rows, **details)


def run_segment_stage(
    *,
    warehouse: WarehouseStore,
    settings: BuildSettings,
    collection: str,
    stage: str,
    build: BuildFn,
    output_schema: pa.Schema,
    config: object | None = None,
) -> SegmentStageRun:
    """`run_beam_stage` over the chunks and turns of the documents that `segments` has
    processed and `stage` has not."""
    pending = PendingDocuments.of(warehouse, collection, stage, "segments")
    segments = extractable_segments(warehouse, collection, pending.todo)
    output = run_beam_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=stage,
        pending=pending,
        inputs=segments,
        build=build,
        output_schema=output_schema,
        config=config,
    )
    return SegmentStageRun(output, pending, segments.num_rows)
