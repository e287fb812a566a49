"""Stage 3b, `segment_phrases`: segments (Parquet) -> spaCy tagger in batches -> phrase
rows (Parquet), per document and incrementally like NER.

The phrases (`transforms.phrases`) become the phrase nodes of the passage graph through the
`segment_nodes` stage, which keeps those that two segments or more share.
"""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam
from apache_beam.io import parquetio

from pipelines.launcher import run_segment_stage
from pipelines.options import SpacyStageConfig, run_stage
from pipelines.outcome import StageOutcome
from pipelines.settings import BuildSettings
from pipelines.stage_input import Batched, ReadStageInput
from schemas.tables import SEGMENT_PHRASES
from stores.warehouse import WarehouseStore
from transforms.phrases import SpacyPhraseDoFn

STAGE = "segment_phrases"


class ExtractPhrases(beam.PTransform):
    """Segment rows -> SEGMENT_PHRASES rows: batches through the spaCy tagger, each
    segment's lemmatised common-noun phrases."""

    def __init__(self, cfg: SpacyStageConfig) -> None:
        super().__init__()
        self.cfg = cfg

    def expand(self, segments: beam.PCollection) -> beam.PCollection:
        cfg = self.cfg
        dofn = SpacyPhraseDoFn(cfg.model, cfg.max_batch_size)
        return segments | "NounPhrases" >> Batched(dofn, cfg.min_batch_size, cfg.max_batch_size)


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: SpacyStageConfig
) -> beam.PCollection:
    """Add phrase extraction to `p`: read segments, extract phrases, write sharded Parquet."""
    phrases = (
        p
        | "ReadSegments" >> ReadStageInput(input_pattern)
        | "ExtractPhrases" >> ExtractPhrases(cfg)
    )
    phrases | "WritePhrases" >> parquetio.WriteToParquet(
        output_prefix, SEGMENT_PHRASES, file_name_suffix=".parquet"
    )
    return phrases


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Phrases of the chunks and turns of the documents not yet processed."""
    done = run_segment_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        build=build,
        output_schema=SEGMENT_PHRASES,
    )
    return done.outcome(
        distinct_phrases=len(set(done.output.column("phrase").to_pylist())),
        model=settings.spacy_model,
    )


def main(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, SpacyStageConfig)


if __name__ == "__main__":
    main()
