"""Running a per-segment Beam pipeline for the documents a stage has not processed yet.

Shared by the NER and relation stages: select the pending documents, hand their rows to
Beam as Parquet shards (`parquet_shard_rows` each), run the pipeline on the configured
runner, and load the sharded output back into the warehouse for exactly those documents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
import pyarrow as pa

from dagster_project.resources import PipelineSettings, WarehouseResource
from pipelines.parquet_io import clear_shards, read_shards, write_input
from schemas.tables import EXTRACTABLE_KINDS, SEGMENTS
from transforms.progress import stage_progress_file, start_progress

BuildFn = Callable[[beam.Pipeline, str, str, Any], beam.PCollection]
PENDING_SEGMENTS_SQL = """
SELECT * FROM segments WHERE collection = ? AND list_contains(?, kind)
AND list_contains(?, doc_id) ORDER BY doc_id, seq
"""


@dataclass(frozen=True)
class PendingDocuments:
    """Documents of a collection that a stage must (re)process, and those it must drop."""

    todo: list[str]
    stale: list[str]

    @classmethod
    def of(
        cls, warehouse: WarehouseResource, collection: str, stage: str, upstream: str
    ) -> PendingDocuments:
        done, ready = warehouse.ledger(collection, stage), warehouse.ledger(collection, upstream)
        return cls(sorted(ready - done), sorted(done - ready))

    def counts(self, rows_in: int, rows_out: int) -> dict[str, Any]:
        """The `stage_result` counts of a run over these documents."""
        return {
            "rows_in": rows_in,
            "rows_out": rows_out,
            "skipped": not self.todo and not self.stale,
            "documents_processed": len(self.todo),
        }


def run_beam_stage(
    *,
    warehouse: WarehouseResource,
    settings: PipelineSettings,
    collection: str,
    stage: str,
    pending: PendingDocuments,
    inputs: pa.Table,
    build: BuildFn,
    output_schema: pa.Schema,
    config: object | None = None,
) -> pa.Table:
    """Run `build` over `inputs` with `config` (default: the spaCy stage config) and store
    its output as `stage`'s rows of `pending.todo`. The stage's progress file counts its
    input rows done as the pipeline reads them (`pipelines.stage_input`)."""
    folder = warehouse.workspace.parquet_dir(collection, stage)
    output_prefix = folder / "output" / "part"
    clear_shards(output_prefix)
    start_progress(stage_progress_file(folder), inputs.num_rows, "rows")
    if inputs.num_rows:
        input_pattern = write_input(inputs, folder / "input", settings.parquet_shard_rows)
        with beam.Pipeline(options=settings.beam_options()) as p:
            build(p, input_pattern, str(output_prefix), config or settings.spacy_stage())
    output = read_shards(output_prefix, output_schema)
    warehouse.replace_documents(stage, collection, stage, pending.todo, output, pending.stale)
    return output


@dataclass(frozen=True)
class SegmentStageRun:
    """What a per-segment stage wrote, and its `stage_result` counts."""

    output: pa.Table
    counts: dict[str, Any]


def run_segment_stage(
    *,
    warehouse: WarehouseResource,
    settings: PipelineSettings,
    collection: str,
    stage: str,
    build: BuildFn,
    output_schema: pa.Schema,
    config: object | None = None,
) -> SegmentStageRun:
    """`run_beam_stage` over the chunks and turns of the documents that `segments` has
    processed and `stage` has not."""
    pending = PendingDocuments.of(warehouse, collection, stage, "segments")
    segments = warehouse.fetch(
        PENDING_SEGMENTS_SQL, [collection, list(EXTRACTABLE_KINDS), pending.todo]
    ).cast(SEGMENTS)
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
    return SegmentStageRun(output, pending.counts(segments.num_rows, output.num_rows))
