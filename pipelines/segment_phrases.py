"""Beam pipeline: segments (Parquet) -> spaCy tagger in batches -> phrase rows (Parquet).

The phrases (`transforms.phrases`) become the phrase nodes of the passage graph through the
`segment_nodes` stage, which keeps those that two segments or more share.
"""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam
from apache_beam.io import parquetio

from pipelines.options import SpacyStageConfig, run_stage
from pipelines.stage_input import ReadStageInput
from schemas.tables import SEGMENT_PHRASES
from transforms.phrases import SpacyPhraseDoFn


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: SpacyStageConfig
) -> beam.PCollection:
    """Add phrase extraction to `p`: read segments, batch, tag, write sharded Parquet."""
    phrases = (
        p
        | "ReadSegments" >> ReadStageInput(input_pattern)
        | "Batch"
        >> beam.BatchElements(min_batch_size=cfg.min_batch_size, max_batch_size=cfg.max_batch_size)
        | "NounPhrases" >> beam.ParDo(SpacyPhraseDoFn(cfg.model, cfg.max_batch_size))
    )
    phrases | "WritePhrases" >> parquetio.WriteToParquet(
        output_prefix, SEGMENT_PHRASES, file_name_suffix=".parquet"
    )
    return phrases


def run(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, SpacyStageConfig)


if __name__ == "__main__":
    run()
