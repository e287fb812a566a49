"""Beam pipeline: segments (Parquet) -> spaCy NER in batches -> entity mentions (Parquet)."""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam
from apache_beam.io import parquetio

from pipelines.options import SpacyStageConfig, run_stage
from schemas.tables import ENTITY_MENTIONS
from transforms.ner import SpacyNerDoFn


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: SpacyStageConfig
) -> beam.PCollection:
    """Add NER to `p`: read segments, batch, extract mentions, write sharded Parquet."""
    mentions = (
        p
        | "ReadSegments" >> parquetio.ReadFromParquet(input_pattern)
        | "Batch"
        >> beam.BatchElements(min_batch_size=cfg.min_batch_size, max_batch_size=cfg.max_batch_size)
        | "SpacyNer" >> beam.ParDo(SpacyNerDoFn(cfg.model, cfg.max_batch_size))
    )
    mentions | "WriteMentions" >> parquetio.WriteToParquet(
        output_prefix, ENTITY_MENTIONS, file_name_suffix=".parquet"
    )
    return mentions


def run(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline)


if __name__ == "__main__":
    run()
