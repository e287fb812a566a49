"""Beam pipeline options and stage configurations from configuration rather than `sys.argv`.

`PipelineOptions()` parses the process's argv by default, which breaks under pytest and
CLI wrappers; kgmem always passes explicit flags. Each stage configuration declares its own
command-line flags (`add_arguments`) and reads them back (`from_args`) for `run_stage`.

Runners (`pipeline_options`): the configured runner and DirectRunner mode become flags placed
*before* the pass-through flags, so a pass-through flag (`--runner=FlinkRunner`,
`--direct_num_workers=4`) wins, as on any Beam command line. Runner-specific flags
(`--flink_master`, `--spark_master_url`, `--job_endpoint`, `--environment_type`,
`--project`, `--region`, `--temp_location`, `--sdk_container_image`, `--prism_location`,
`--dask_client_address`) pass through untouched. `DaskRunner` (`pipelines.dask_cluster`)
becomes Beam's Dask runner with the configured scheduler address and
`--dask_partition_size=1`: a stage's input splits are the elements of its one `Create`
(`pipelines.stage_io`), and Dask bag partitions come from that `Create` alone, so one split
per partition is what spreads a stage over the workers (Beam's default, 128 elements per
partition, would put a whole stage on one worker); `--dask_npartitions` or
`--dask_partition_size` given as pass-through flags replace it.

`DirectRunner` means Beam's Python direct runner, the FnApiRunner, in the configured mode:
since Beam 2.6x the plain `DirectRunner` name first tries Prism when its binary can be had
(downloaded from GitHub at first use) and silently ignores `direct_running_mode` there, so
the same setting would run differently on- and offline.
Prism is one setting away (`PrismRunner`), and `--runner=DirectRunner` as a pass-through
flag still gets Beam's switching behaviour.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.dask_cluster import (
    DASK_RUNNER_IMPL,
    PARTITION_FLAGS,
    flag_names,
    is_dask,
    register_dask_options,
    run_pipeline,
    scheduler_for,
)
from pipelines.runner_modes import DEFAULT_RUNNER, DIRECT_RUNNING_MODES
from transforms.ner_backends import (
    DEFAULT_HF_NER_MODEL,
    DEFAULT_SPACY_MODEL,
    DEVICES,
    HF_BACKEND,
    SPACY_BACKEND,
)

DIRECT_RUNNER_IMPL = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"
"""What `DirectRunner` resolves to: the Python direct runner, which honours the mode."""
NER_BACKENDS = (SPACY_BACKEND, HF_BACKEND)
_DEFAULT_NER_MODELS = {SPACY_BACKEND: DEFAULT_SPACY_MODEL, HF_BACKEND: DEFAULT_HF_NER_MODEL}


def runner_flags(
    runner: str = DEFAULT_RUNNER,
    direct_running_mode: str = "in_memory",
    direct_num_workers: int | None = None,
    dask_address: str | None = None,
) -> list[str]:
    """The flags naming `runner`; for `DirectRunner` also its mode and worker count
    (`direct_num_workers`: None is one per CPU outside `in_memory`, which runs one); for
    `DaskRunner` its scheduler (`dask_address`, when given) and one split per partition."""
    if is_dask(runner):
        address = [f"--dask_client_address={dask_address}"] if dask_address else []
        return [f"--runner={DASK_RUNNER_IMPL}", *address, "--dask_partition_size=1"]
    if runner != DEFAULT_RUNNER:
        return [f"--runner={runner}"]
    if direct_running_mode not in DIRECT_RUNNING_MODES:
        raise ValueError(
            f"direct_running_mode must be one of {DIRECT_RUNNING_MODES}, "
            f"not {direct_running_mode!r}"
        )
    if direct_num_workers is not None and direct_num_workers < 0:
        raise ValueError("direct_num_workers must be >= 0 (0: one per CPU)")
    workers = 1 if direct_running_mode == "in_memory" else direct_num_workers or 0
    return [
        f"--runner={DIRECT_RUNNER_IMPL}",
        f"--direct_running_mode={direct_running_mode}",
        f"--direct_num_workers={workers}",
    ]


def pipeline_options(
    runner: str = DEFAULT_RUNNER,
    direct_running_mode: str = "in_memory",
    extra_flags: Sequence[str] = (),
    direct_num_workers: int | None = None,
    dask_address: str | None = None,
) -> PipelineOptions:
    """Options for `runner`; `extra_flags` are passed through after the runner's own flags
    (e.g. `--flink_master=host:8081`) and win over them (a Dask partitioning flag replaces
    kgmem's, since Beam allows only one of the two)."""
    flags = runner_flags(runner, direct_running_mode, direct_num_workers, dask_address)
    if is_dask(runner) or any(is_dask(f.partition("=")[2]) for f in extra_flags):
        register_dask_options()
        if flag_names(extra_flags) & set(PARTITION_FLAGS):
            flags = [f for f in flags if f.split("=", 1)[0] not in PARTITION_FLAGS]
    return PipelineOptions(flags=[*flags, *extra_flags])


@dataclass(frozen=True)
class SpacyStageConfig:
    """How a spaCy-backed stage runs: the model (package name or path) and the segments
    per batch (batches are made as the input is read, `pipelines.stage_io`)."""

    model: str = DEFAULT_SPACY_MODEL
    max_batch_size: int = 64

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--model", default=DEFAULT_SPACY_MODEL, help="spaCy package or path")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SpacyStageConfig:
        return cls(model=args.model)


@dataclass(frozen=True)
class NerBackendConfig:
    """How the NER stage runs, and with which backend.

    - `backend`: `spacy` (a spaCy pipeline in a batched DoFn) or `hf` (a Hugging Face
      token-classification model through Beam `RunInference`).
    - `model`: spaCy package name or path, or Hugging Face model id or path; `None` picks
      the backend's default (packaged en_core_web_md 3.7.1, or BERT-large CoNLL-03 for `hf`).
    - `max_batch_size`: segments per batch (made as the input is read, `pipelines.stage_io`).
    - `device`: `auto` (CUDA when available), `cpu` or `cuda`; `hf` only, spaCy runs on CPU.
    - `max_length`, `stride`: `hf` window length in tokens and overlap of the windows of a
      longer segment.
    """

    backend: str = SPACY_BACKEND
    model: str | None = None
    max_batch_size: int = 64
    device: str = "auto"
    max_length: int = 512
    stride: int = 128

    def __post_init__(self) -> None:
        if self.backend not in NER_BACKENDS:
            raise ValueError(f"NER backend must be one of {NER_BACKENDS}, not {self.backend!r}")
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES}, not {self.device!r}")
        if self.max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        if not 0 <= self.stride < self.max_length:
            raise ValueError("stride needs 0 <= stride < max_length")
        if self.model is None:
            object.__setattr__(self, "model", _DEFAULT_NER_MODELS[self.backend])

    @property
    def model_tag(self) -> str:
        """`backend:model`, the `model` column of the mentions it finds."""
        return f"{self.backend}:{self.model}"

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--backend", choices=NER_BACKENDS, default=SPACY_BACKEND)
        parser.add_argument(
            "--model", help="spaCy package or path, or Hugging Face model id or path"
        )
        parser.add_argument("--device", choices=DEVICES, default="auto", help="hf backend only")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> NerBackendConfig:
        return cls(backend=args.backend, model=args.model, device=args.device)


ConfigT = TypeVar("ConfigT", SpacyStageConfig, NerBackendConfig)
BuildFn = Callable[[beam.Pipeline, str, str, ConfigT], beam.PCollection]


def run_stage(
    build: BuildFn[ConfigT],
    description: str,
    argv: Sequence[str] | None = None,
    test_pipeline: beam.Pipeline | None = None,
    config_type: type[ConfigT] = SpacyStageConfig,
) -> None:
    """Shared command line of the stage pipelines: `--input GLOB --output PREFIX
    [--runner R] [--direct_running_mode M] [--direct_num_workers N]`, the flags of
    `config_type` (e.g. `--model M`) and any Beam flag; with `test_pipeline`, only build
    onto it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--input", required=True, help="glob of input Parquet files")
    parser.add_argument("--output", required=True, help="prefix of the output shards")
    add_runner_arguments(parser)
    config_type.add_arguments(parser)
    args, beam_flags = parser.parse_known_args(argv)
    launch(build, args, config_type.from_args(args), beam_flags, test_pipeline)


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    """`--runner`, `--direct_running_mode` and `--direct_num_workers` of a stage command
    line; any other Beam flag (`--flink_master=...`, `--dask_client_address=...`) passes
    through unparsed."""
    parser.add_argument("--runner", default=DEFAULT_RUNNER, help="Beam runner name")
    parser.add_argument("--direct_running_mode", choices=DIRECT_RUNNING_MODES, default="in_memory")
    parser.add_argument(
        "--direct_num_workers",
        type=int,
        default=None,
        help="DirectRunner workers (0: per CPU); for DaskRunner without a scheduler, the "
        "workers of the LocalCluster started for the run",
    )


def stage_options(
    args: argparse.Namespace, beam_flags: Sequence[str], dask_address: str | None = None
) -> PipelineOptions:
    """Options of a stage command line: its runner arguments and pass-through Beam flags,
    with the Dask scheduler `dask_address` when given."""
    return pipeline_options(
        args.runner, args.direct_running_mode, beam_flags, args.direct_num_workers, dask_address
    )


def launch(
    build: Callable[..., object],
    args: argparse.Namespace,
    cfg: object,
    beam_flags: Sequence[str],
    test_pipeline: beam.Pipeline | None = None,
) -> None:
    """Build a stage from parsed `--input`, `--output` and runner arguments with `cfg`, and
    run it to completion (a DaskRunner run without a scheduler on a LocalCluster of
    `--direct_num_workers` workers started for it); onto `test_pipeline` instead, only
    build (the test runs it)."""
    if test_pipeline is not None:
        build(test_pipeline, args.input, args.output, cfg)
        return
    with scheduler_for(args.runner, None, beam_flags, args.direct_num_workers) as address:
        p = beam.Pipeline(options=stage_options(args, beam_flags, address))
        build(p, args.input, args.output, cfg)
        run_pipeline(p)
