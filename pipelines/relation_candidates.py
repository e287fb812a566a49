"""Stage 4, `relation_candidates`: segments with their mentions (Parquet) -> relation
candidates (Parquet).

Two extractors read the same input in one pipeline: the dependency patterns and issue-state
events (spaCy parser), and, when configured, the pair classifier (`transforms.relation_
classifier`); their candidates are flattened into one output, told apart by `extractor`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

import apache_beam as beam

from pipelines.launcher import PendingDocuments, run_beam_stage
from pipelines.options import SpacyStageConfig, run_stage
from pipelines.outcome import StageOutcome, value_counts
from pipelines.relation_classifier import ClassifyPairs
from pipelines.settings import BuildSettings
from pipelines.stage_io import ReadStageInput, WriteShards
from schemas.tables import RELATION_CANDIDATES
from stores.stage_inputs import segments_with_mentions
from stores.warehouse import WarehouseStore
from transforms.relation_classifier.candidates import ClassifierConfig
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


STAGE = "relation_candidates"


class ExtractRelations(beam.PTransform):
    """Batches of segments with their mentions -> RELATION_CANDIDATES rows: the dependency
    patterns and issue-state events (spaCy parser) and, when configured, the pair
    classifier, read the same batches; their candidates are flattened into one collection."""

    def __init__(self, cfg: RelationStageConfig) -> None:
        super().__init__()
        self.cfg = cfg

    def expand(self, batches: beam.PCollection) -> beam.PCollection:
        spacy, classifier = self.cfg.spacy, self.cfg.classifier
        patterns = DependencyRelationDoFn(spacy.model, spacy.max_batch_size)
        branches = [batches | "DependencyPatterns" >> beam.ParDo(patterns)]
        if classifier is not None:
            branches.append(batches | "ClassifyPairs" >> ClassifyPairs(classifier))
        return branches | "Flatten" >> beam.Flatten()


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: RelationStageConfig
) -> beam.PCollection:
    """Add relation extraction to `p`: read in batches (of the spaCy stage's size, which the
    classifier, when configured, shares), run the extractors, write Parquet."""
    read = ReadStageInput(input_pattern, cfg.spacy.max_batch_size)
    candidates = (
        p | "ReadSegmentsWithMentions" >> read | "ExtractRelations" >> ExtractRelations(cfg)
    )
    candidates | "WriteCandidates" >> WriteShards(
        output_prefix, RELATION_CANDIDATES, read.num_files
    )
    return candidates


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Relation candidates of the documents NER has processed and this stage has not; a
    first-person subject in a conversation turn resolves to the speaker."""
    pending = PendingDocuments.of(warehouse, collection, STAGE, "entity_mentions")
    segments = segments_with_mentions(warehouse, collection, pending.todo)
    classifier = settings.relation_classifier_config(str(warehouse.workspace.root))
    candidates = run_beam_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        pending=pending,
        inputs=segments,
        build=build,
        output_schema=RELATION_CANDIDATES,
        config=RelationStageConfig(settings.spacy_stage(), classifier),
    )
    return pending.outcome(
        segments.num_rows,
        candidates.num_rows,
        negated=sum(candidates.column("negated").to_pylist()),
        classifier=classifier.model if classifier else "none (no trained artifact)",
        by_extractor=value_counts(candidates.column("extractor").to_pylist()),
    )


def main(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, RelationStageConfig)


if __name__ == "__main__":
    main()
