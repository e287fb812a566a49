"""Beam pipeline options from configuration rather than from `sys.argv`.

`PipelineOptions()` parses the process's argv by default, which breaks under pytest and
CLI wrappers; kgmem always passes explicit flags.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from transforms.spacy_models import DEFAULT_SPACY_MODEL

DEFAULT_RUNNER = "DirectRunner"


def pipeline_options(
    runner: str = DEFAULT_RUNNER,
    direct_running_mode: str = "in_memory",
    extra_flags: Sequence[str] = (),
) -> PipelineOptions:
    """Options for `runner`; `extra_flags` are passed through (e.g. `--flink_master=...`)."""
    options = {"runner": runner}
    if runner == DEFAULT_RUNNER:
        options["direct_running_mode"] = direct_running_mode
    return PipelineOptions(flags=list(extra_flags), **options)


@dataclass(frozen=True)
class SpacyStageConfig:
    """How a spaCy-backed stage runs: the model (package name or path) and batch bounds."""

    model: str = DEFAULT_SPACY_MODEL
    min_batch_size: int = 16
    max_batch_size: int = 64


BuildFn = Callable[[beam.Pipeline, str, str, SpacyStageConfig], beam.PCollection]


def run_stage(
    build: BuildFn,
    description: str,
    argv: Sequence[str] | None = None,
    test_pipeline: beam.Pipeline | None = None,
) -> None:
    """Shared command line of the stage pipelines: `--input GLOB --output PREFIX [--model M]
    [--runner R] [any Beam flag]`; with `test_pipeline`, only build onto it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--input", required=True, help="glob of input Parquet files")
    parser.add_argument("--output", required=True, help="prefix of the output shards")
    parser.add_argument("--model", default=DEFAULT_SPACY_MODEL, help="spaCy package or path")
    parser.add_argument("--runner", default=DEFAULT_RUNNER)
    args, beam_flags = parser.parse_known_args(argv)
    p = test_pipeline or beam.Pipeline(
        options=pipeline_options(args.runner, extra_flags=beam_flags)
    )
    build(p, args.input, args.output, SpacyStageConfig(model=args.model))
    if test_pipeline is None:
        p.run().wait_until_finish()
