"""Beam pipeline: segments with their mentions (Parquet) -> dependency patterns -> candidates."""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam
from apache_beam.io import parquetio

from pipelines.options import SpacyStageConfig, run_stage
from schemas.tables import RELATION_CANDIDATES
from transforms.relations import DependencyRelationDoFn


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: SpacyStageConfig
) -> beam.PCollection:
    """Add relation extraction to `p`: read, batch, parse and match patterns, write Parquet."""
    candidates = (
        p
        | "ReadSegmentsWithMentions" >> parquetio.ReadFromParquet(input_pattern)
        | "Batch"
        >> beam.BatchElements(min_batch_size=cfg.min_batch_size, max_batch_size=cfg.max_batch_size)
        | "DependencyPatterns" >> beam.ParDo(DependencyRelationDoFn(cfg.model, cfg.max_batch_size))
    )
    candidates | "WriteCandidates" >> parquetio.WriteToParquet(
        output_prefix, RELATION_CANDIDATES, file_name_suffix=".parquet"
    )
    return candidates


def run(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline)


if __name__ == "__main__":
    run()
