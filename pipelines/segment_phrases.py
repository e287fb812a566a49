"""Stage 3b, `segment_phrases`: segments (Parquet) -> spaCy tagger in batches -> phrase
rows (Parquet), per document and incrementally like NER.

The phrases (`transforms.phrases`) become the phrase nodes of the passage graph through the
`segment_nodes` stage, which keeps those that two segments or more share.
"""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam

from pipelines.launcher import run_segment_stage
from pipelines.options import SpacyStageConfig, run_stage
from pipelines.outcome import StageOutcome
from pipelines.settings import BuildSettings
from pipelines.stage_io import ReadStageInput, WriteShards
from schemas.tables import SEGMENT_PHRASES
from stores.warehouse import WarehouseStore
from transforms.phrases import SpacyPhraseDoFn

STAGE = "segment_phrases"


class ExtractPhrases(beam.PTransform):
    """Batches of segment rows -> SEGMENT_PHRASES rows: each batch through the spaCy
    tagger, each segment's lemmatised common-noun phrases."""

    def __init__(self, cfg: SpacyStageConfig) -> None:
        super().__init__()
        self.cfg = cfg

    def expand(self, batches: beam.PCollection) -> beam.PCollection:
        dofn = SpacyPhraseDoFn(self.cfg.model, self.cfg.max_batch_size)
        return batches | "NounPhrases" >> beam.ParDo(dofn)


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: SpacyStageConfig
) -> beam.PCollection:
    """Add phrase extraction to `p`: read segments in batches, extract phrases, write
    sharded Parquet."""
    read = ReadStageInput(input_pattern, cfg.max_batch_size)
    phrases = p | "ReadSegments" >> read | "ExtractPhrases" >> ExtractPhrases(cfg)
    phrases | "WritePhrases" >> WriteShards(output_prefix, SEGMENT_PHRASES, read.num_files)
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
