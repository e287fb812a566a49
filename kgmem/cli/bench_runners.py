"""`kgmem bench runners`: the options and the table of `benchmarks.runner_scaling`.

    kgmem bench runners [--workers 1,2,4] [--documents 200] [--seed 0] [--work DIR]
                        [--json-out bench_runners.json]

`--workers` are the worker processes of each Dask `LocalCluster` (comma separated, each run
in turn after the in-memory DirectRunner baseline); `--documents` the size of the generated
collection (the option `kgmem bench build` declares; for this suite its default is
`DEFAULT_DOCUMENTS`); `--work` (the option `kgmem bench reliability` declares) the folder
in which a temporary folder for the collection and stage files is made and removed
afterwards (default: the system's); `--json-out` the results file (default
bench_runners.json). The exit status is 1 when a runner's outputs differ from the
baseline's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from kgmem.cli.common import console, out

DEFAULT_DOCUMENTS = 200
DEFAULT_JSON = "bench_runners.json"


def add_arguments(bench: argparse.ArgumentParser) -> None:
    """The suite's own options; remembers the shared options' defaults (`--documents`,
    `--json-out`) so that `run` can tell them from values given on the command line."""
    group = bench.add_argument_group("runners")
    group.add_argument("--workers", default="1,2,4", help="Dask worker counts, comma separated")
    bench.set_defaults(
        runners_shared_defaults={
            "documents": bench.get_default("documents"),
            "json_out": bench.get_default("json_out"),
        }
    )


def run(args: argparse.Namespace) -> int:
    from benchmarks.runner_scaling import parse_workers
    from benchmarks.runner_scaling import run as run_benchmark

    shared = args.runners_shared_defaults
    workers = parse_workers(args.workers)
    documents = DEFAULT_DOCUMENTS if args.documents == shared["documents"] else args.documents
    if documents < 1:
        raise ValueError(f"--documents must be at least 1, not {documents}")
    json_out = Path(DEFAULT_JSON if args.json_out == shared["json_out"] else args.json_out)
    result = run_benchmark(
        workers,
        documents,
        seed=args.seed,
        work=Path(args.work) if args.work else None,
        on_step=lambda step: console.print(step, highlight=False),
    )
    json_out.write_text(json.dumps(result.as_dict(), indent=2))
    table = Table(
        title=f"Beam runner throughput: {result.segments:,} segments of {result.documents:,} "
        f"generated documents, NER + phrases + relation candidates, {result.cpus} CPUs",
        caption="segments/s over the three stages; ratios to the in-memory DirectRunner's "
        "same pass in this run; cold: models loaded at first use, warm: loaded; cluster "
        "start not in either",
    )
    headers = ("runner", "workers", "cluster start s", "cold s", "cold seg/s", "cold ratio",
               "warm s", "warm seg/s", "warm ratio", "identical")  # fmt: skip
    for i, column in enumerate(headers):
        table.add_column(column, justify="left" if i == 0 else "right", no_wrap=True)
    for r in result.runs:
        table.add_row(
            r.runner, str(r.workers), f"{r.cluster_start_s:.1f}",
            f"{r.seconds['cold']:.1f}", f"{r.per_s['cold']:.1f}", f"{r.ratio['cold']:.2f}",
            f"{r.seconds['warm']:.1f}", f"{r.per_s['warm']:.1f}", f"{r.ratio['warm']:.2f}",
            "yes" if r.identical else "[red]NO[/red]",
        )  # fmt: skip
    out.print(table)
    out.print(f"results written to {json_out}")
    return 0 if all(r.identical for r in result.runs) else 1
