"""Beam runner options of the `kgmem` commands that build (`--beam-runner`, ...).

They map one to one onto `PipelineSettings` fields (`beam_runner`, `direct_running_mode`,
`beam_workers`, `dask_address`, `beam_flags`, `parquet_shard_rows`); an option left out
keeps the setting's default. A runner-specific Beam flag starts with `--`, so it is given in the
`=` form: `--beam-flag=--flink_master=localhost:8081`.
"""

from __future__ import annotations

import argparse
from typing import Any

from pipelines.runner_modes import DIRECT_RUNNING_MODES


def add_beam_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the Beam runner options to `parser`."""
    group = parser.add_argument_group("Beam runner")
    group.add_argument(
        "--beam-runner",
        help="DirectRunner (default), DaskRunner, PrismRunner, PortableRunner, FlinkRunner, "
        "SparkRunner, DataflowRunner",
    )
    group.add_argument(
        "--direct-running-mode", choices=DIRECT_RUNNING_MODES, help="DirectRunner mode"
    )
    group.add_argument(
        "--beam-workers",
        type=int,
        help="DirectRunner workers outside in_memory, or the worker processes of the "
        "DaskRunner's LocalCluster (0: per CPU)",
    )
    group.add_argument(
        "--dask-address",
        metavar="ADDRESS",
        help="DaskRunner: the dask.distributed scheduler, e.g. tcp://scheduler:8786 "
        "(default: a LocalCluster of --beam-workers processes for the build)",
    )
    group.add_argument(
        "--beam-flag",
        action="append",
        default=None,
        metavar="FLAG",
        help="Beam flag passed to every stage; repeatable, e.g. --beam-flag=--flink_master=h:8081",
    )
    group.add_argument("--parquet-shard-rows", type=int, help="rows per Parquet input shard")


def beam_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The `PipelineSettings` fields set by the Beam options given in `args`."""
    values = {
        "beam_runner": args.beam_runner,
        "direct_running_mode": args.direct_running_mode,
        "beam_workers": args.beam_workers,
        "dask_address": args.dask_address,
        "beam_flags": args.beam_flag,
        "parquet_shard_rows": args.parquet_shard_rows,
    }
    return {k: v for k, v in values.items() if v is not None}
