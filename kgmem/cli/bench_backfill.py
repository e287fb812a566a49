"""`kgmem bench backfill`: the options and table of `benchmarks.backfill_scaling`.

    kgmem bench backfill [--partitions 4] [--partition-documents 30] [--concurrency 1,2]
                         [--seed 0] [--home DIR] [--json-out bench_backfill.json]

The same `--partitions` generated collections are backfilled once per `--concurrency`
level (partitions built at once, each in a process of its own), each level in a fresh
workspace under `<home>/bench_backfill/`; the first level is the baseline of the wall-time
ratios. The exit status is 1 when a partition failed or a level built different snapshots.
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path

from rich.table import Table

from kgmem.cli.common import console, out, route_library_logs
from stores.workspace import Workspace

DEFAULT_JSON = "bench_backfill.json"


def add_arguments(bench: argparse.ArgumentParser) -> None:
    group = bench.add_argument_group("backfill")
    group.add_argument("--partitions", type=int, default=4, help="collections to backfill")
    group.add_argument(
        "--partition-documents", type=int, default=30, help="generated documents per collection"
    )
    group.add_argument(
        "--concurrency", default="1,2", help="partitions at once per level, baseline first"
    )


def run(args: argparse.Namespace) -> int:
    from benchmarks.backfill_scaling import parse_levels
    from benchmarks.backfill_scaling import run as run_benchmark

    levels = parse_levels(args.concurrency)
    result = run_benchmark(
        args.partitions,
        args.partition_documents,
        levels,
        home=args.home,
        seed=args.seed,
        on_level=lambda level: console.print(
            f"backfilling {args.partitions} partitions, {level} at a time"
        ),
        worker_setup=functools.partial(
            route_library_logs, Workspace.at(args.home).root, args.verbose
        ),
    )
    shared_default = args.json_out == "bench_retrieval.json"  # --json-out not given
    json_out = Path(DEFAULT_JSON if shared_default else args.json_out)
    json_out.write_text(json.dumps(result.as_dict(), indent=2))
    table = Table(
        title=f"backfill: {result.partitions} partitions of {result.documents} documents",
        caption="identical snapshots at every level: " + ("yes" if result.identical else "NO"),
    )
    for column in ("at once", "wall s", "/ first level", "partition s (each)", "failed"):
        table.add_column(column, justify="right")
    for level in result.levels:
        table.add_row(
            str(level.max_concurrent),
            f"{level.seconds:,.1f}",
            f"{result.ratios[level.max_concurrent]:.2f}",
            ", ".join(f"{p['seconds']:.0f}" for p in level.partitions),
            ", ".join(level.failed) or "0",
        )
    out.print(table)
    out.print(f"results written to {json_out}")
    failed = any(level.failed for level in result.levels)
    return 1 if failed or not result.identical else 0
