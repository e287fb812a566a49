"""Beam pipeline: segments with their mentions (Parquet) -> relation candidates (Parquet).

Two extractors read the same input in one pipeline: the dependency patterns and issue-state
events (spaCy parser), and, when configured, the pair classifier (`transforms.relation_
classifier`); their candidates are flattened into one output, told apart by `extractor`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

import apache_beam as beam
from apache_beam.io import parquetio

from pipelines.options import SpacyStageConfig, run_stage
from schemas.tables import RELATION_CANDIDATES
from transforms.relation_classifier.candidates import ClassifierConfig, ClassifierRelationDoFn
from transforms.relations import DependencyRelationDoFn


@dataclass(frozen=True)
class RelationStageConfig:
    """The spaCy parser configuration and the optional pair classifier."""

    spacy: SpacyStageConfig = field(default_factory=SpacyStageConfig)
    classifier: ClassifierConfig | None = None

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        SpacyStageConfig.add_arguments(parser)
        parser.add_argument("--classifier", help="trained classifier artifact folder (optional)")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RelationStageConfig:
        classifier = ClassifierConfig(model=args.classifier) if args.classifier else None
        return cls(SpacyStageConfig.from_args(args), classifier)


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: RelationStageConfig
) -> beam.PCollection:
    """Add relation extraction to `p`: read, batch, run the extractors, write Parquet."""
    segments = p | "ReadSegmentsWithMentions" >> parquetio.ReadFromParquet(input_pattern)
    branches = [
        segments
        | "BatchForParser"
        >> beam.BatchElements(
            min_batch_size=cfg.spacy.min_batch_size, max_batch_size=cfg.spacy.max_batch_size
        )
        | "DependencyPatterns"
        >> beam.ParDo(DependencyRelationDoFn(cfg.spacy.model, cfg.spacy.max_batch_size))
    ]
    if cfg.classifier is not None:
        branches.append(
            segments
            | "BatchForClassifier"
            >> beam.BatchElements(
                min_batch_size=cfg.classifier.min_batch_size,
                max_batch_size=cfg.classifier.max_batch_size,
            )
            | "ClassifyPairs" >> beam.ParDo(ClassifierRelationDoFn(cfg.classifier))
        )
    candidates = branches | "Flatten" >> beam.Flatten()
    candidates | "WriteCandidates" >> parquetio.WriteToParquet(
        output_prefix, RELATION_CANDIDATES, file_name_suffix=".parquet"
    )
    return candidates


def run(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, RelationStageConfig)


if __name__ == "__main__":
    run()
