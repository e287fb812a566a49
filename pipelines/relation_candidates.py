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
from pipelines.stage_input import ReadStageInput
from schemas.tables import RELATION_CANDIDATES
from transforms.relation_classifier.candidates import ClassifierConfig, ClassifierRelationDoFn
from transforms.relations import DependencyRelationDoFn

SEGMENTS_WITH_MENTIONS_SQL = """
WITH devices AS (
    SELECT doc_id, mode(text ORDER BY text) AS context_device FROM entity_mentions
    WHERE collection = $collection AND label = 'PRODUCT' GROUP BY doc_id)
SELECT s.segment_id, s.collection, s.doc_id, s.text, s.speaker, d.context_device,
       coalesce(list({'text': m.text, 'label': m.label, 'entity_type': m.entity_type,
                      'char_start': m.char_start, 'char_end': m.char_end}
                     ORDER BY m.char_start) FILTER (WHERE m.mention_id IS NOT NULL), []) AS mentions
FROM segments s
LEFT JOIN entity_mentions m ON m.collection = s.collection AND m.segment_id = s.segment_id
LEFT JOIN devices d ON d.doc_id = s.doc_id
WHERE s.collection = $collection AND list_contains($kinds, s.kind)
  AND list_contains($doc_ids, s.doc_id)
GROUP BY ALL
ORDER BY s.doc_id, s.segment_id
"""
"""The stage's input: each pending segment with its NER mentions and its document's most
mentioned product (SEGMENT_WITH_MENTIONS rows); parameters collection, kinds, doc_ids."""


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
    segments = p | "ReadSegmentsWithMentions" >> ReadStageInput(input_pattern)
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
