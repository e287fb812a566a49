"""Beam pipeline: segments with their mentions (Parquet) -> pair classifier -> candidates."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import apache_beam as beam

from pipelines.options import add_runner_arguments, launch
from pipelines.stage_io import ReadStageInput, WriteShards
from schemas.tables import RELATION_CANDIDATES
from transforms.pair_window import DEFAULT_WINDOW
from transforms.relation_classifier.candidates import (
    BACKENDS,
    ClassifierConfig,
    ClassifierRelationDoFn,
)
from transforms.relation_classifier.probe import DEFAULT_NAME


class ClassifyPairs(beam.PTransform):
    """Batches of segments with their mentions -> RELATION_CANDIDATES rows of the pair
    classifier: every entity pair within the window classified."""

    def __init__(self, cfg: ClassifierConfig) -> None:
        super().__init__()
        self.cfg = cfg

    def expand(self, batches: beam.PCollection) -> beam.PCollection:
        return batches | "Classify" >> beam.ParDo(ClassifierRelationDoFn(self.cfg))


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: ClassifierConfig
) -> beam.PCollection:
    """Add relation classification to `p`: read in batches, classify pairs, write Parquet."""
    read = ReadStageInput(input_pattern, cfg.max_batch_size)
    candidates = p | "ReadSegmentsWithMentions" >> read | "ClassifyPairs" >> ClassifyPairs(cfg)
    candidates | "WriteCandidates" >> WriteShards(
        output_prefix, RELATION_CANDIDATES, read.num_files
    )
    return candidates


def main(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command line: `--input GLOB --output PREFIX [--backend probe|hf] [--model M]
    [--home DIR] [--window W] [--min-confidence C] [--runner R] [any Beam flag]`; with
    `test_pipeline`, only build onto it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", required=True, help="glob of input Parquet files")
    parser.add_argument("--output", required=True, help="prefix of the output shards")
    parser.add_argument("--backend", default="probe", choices=BACKENDS)
    parser.add_argument("--model", default=DEFAULT_NAME, help="artifact name/folder or HF model")
    parser.add_argument("--home", default=None, help="kgmem workspace holding probe artifacts")
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("--min-confidence", type=float, default=0.0)
    add_runner_arguments(parser)
    args, beam_flags = parser.parse_known_args(argv)
    cfg = ClassifierConfig(
        backend=args.backend,
        model=args.model,
        home=args.home,
        window=args.window,
        min_confidence=args.min_confidence,
    )
    launch(build, args, cfg, beam_flags, test_pipeline)


if __name__ == "__main__":
    main()
