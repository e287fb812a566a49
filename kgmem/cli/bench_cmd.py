"""`kgmem bench`: extraction throughput and retrieval latency.

    kgmem bench extraction [--segments 400] [--llm-segments 8] [--output bench.json]
    kgmem bench retrieval [--sizes sample,100000,1000000] [--queries 50]
                          [--strategies all|a,b] [--option KEY=VALUE ...] [--json-out FILE]
                          [--home DIR] [--no-warm-cache]
    kgmem bench build [--documents 1000] [--sizes N1,N2] [--queries 50] [--llm]
                      [--json-out bench_build.json] [--home DIR]  (see cli/bench_build.py)
    kgmem bench reliability [--input PATH ...] [--kill-stages all|a,b] [--threads 4]
                            [--work DIR]  (see cli/bench_reliability.py)
    kgmem bench backfill [--partitions 4] [--partition-documents 30] [--concurrency 1,2]
                         [--home DIR]  (see cli/bench_backfill.py)
    kgmem bench runners [--workers 1,2,4] [--documents 200] [--json-out FILE]
                        [--work DIR]  (see cli/bench_runners.py)
    kgmem bench device [--encoder DIR] [--ner-model ID|PATH] [--texts 2048]
                       [--cpu-texts 256] [--rgcn E,F,R,EPOCHS]  (see cli/bench_device.py)
    kgmem bench serve [--sizes sample,100000] [--clients 1,8,32] [--queries 40]
                      [--serve-seconds 60]  (see cli/bench_serve.py)

extraction: each backend runs in its Beam stage and alone on the same segments in this
process; the ratio is the stage's throughput over the bare model's.
device: the encoder, Hugging Face NER and the R-GCN on the CPU and on CUDA in this process.
retrieval: per strategy, the first query (structures built) and p50/p95 latency on the
sample corpus and on synthetic graphs of N facts (generated once under
<home>/bench_retrieval/), each as a ratio to `dense` in the same run, with the Python peak
memory of each strategy (measured in a process of its own, native memory included), the
snapshot's files read into the page cache before each strategy unless --no-warm-cache.
Results also go to a JSON file: rewritten after each strategy (rows so far under
"measured"), and at the end with every size and its ratios under "sizes".
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from kgmem.cli import (
    bench_backfill,
    bench_build,
    bench_device,
    bench_reliability,
    bench_runners,
    bench_serve,
)
from kgmem.cli.common import add_home, add_strategy_options, console, out

if TYPE_CHECKING:
    from benchmarks.retrieval_latency import SizeResult, StrategyLatency


SUITES = (
    "extraction",
    "retrieval",
    "build",
    "reliability",
    "backfill",
    "runners",
    "device",
    "serve",
)


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    bench = commands.add_parser(
        "bench",
        help="measure extraction throughput, retrieval latency, build cost, reliability, "
        "Beam runner scaling or the CUDA paths",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument(
        "suite",
        choices=SUITES,
    )
    bench.add_argument("--segments", type=int, default=400, help="segments for NER and relations")
    bench.add_argument("--llm-segments", type=int, default=0, help="chunks for the LLM (0: skip)")
    bench.add_argument("--output", default="bench_extraction.json", help="JSON results file")
    retrieval = bench.add_argument_group("retrieval")
    retrieval.add_argument(
        "--sizes", default="sample,100000", help="'sample' and/or fact counts, comma separated"
    )
    retrieval.add_argument("--queries", type=int, default=50, help="timed queries per strategy")
    retrieval.add_argument(
        "--strategies", default="all", help="'all' or names, comma separated (dense is added)"
    )
    retrieval.add_argument("--json-out", default="bench_retrieval.json", help="JSON results file")
    retrieval.add_argument(
        "--no-warm-cache",
        dest="warm_cache",
        action="store_false",
        help="measure with the page cache as the strategies before left it, instead of "
        "reading the snapshot's files into it before each strategy",
    )
    add_strategy_options(retrieval)
    add_home(retrieval)
    bench_build.add_arguments(bench)
    bench_reliability.add_arguments(bench)
    bench_backfill.add_arguments(bench)
    bench_runners.add_arguments(bench)
    bench_device.add_arguments(bench)
    bench_serve.add_arguments(bench)
    return bench


def run(args: argparse.Namespace) -> int:
    if args.suite == "retrieval":
        return run_retrieval(args)
    if args.suite == "build":
        return bench_build.run(args)
    if args.suite == "reliability":
        return bench_reliability.run(args)
    if args.suite == "backfill":
        return bench_backfill.run(args)
    if args.suite == "runners":
        return bench_runners.run(args)
    if args.suite == "device":
        return bench_device.run(args)
    if args.suite == "serve":
        return bench_serve.run(args)
    from benchmarks.extraction import run as run_benchmark

    results = run_benchmark(args.segments, args.llm_segments)
    Path(args.output).write_text(json.dumps([r.as_dict() for r in results], indent=2))
    table = Table(title="extraction throughput (segments/s, same process, same segments)")
    for column in ("backend", "segments", "stage", "bare model", "stage / bare"):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for r in results:
        table.add_row(
            r.backend,
            str(r.segments),
            f"{r.stage_per_s:.1f}",
            f"{r.bare_per_s:.1f}",
            f"{r.ratio:.2f}",
        )
    out.print(table)
    out.print(f"results written to {args.output}")
    return 0


def run_retrieval(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from benchmarks.retrieval_latency import Hooks, parse_sizes, resolve_strategies
    from benchmarks.retrieval_latency import run as run_benchmark

    sizes, strategies = parse_sizes(args.sizes), resolve_strategies(args.strategies)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        current: list[int] = []

        def finish() -> None:
            if current:
                done = progress.tasks[-1]
                progress.update(current[-1], visible=False)
                if not console.is_terminal:  # no live bar: one line per finished step
                    console.print(f"{done.description}: {done.elapsed or 0:.1f} s")

        def task(description: str, total: int | None) -> None:
            finish()
            current.append(progress.add_task(description, total=total))

        options = dict(args.options)
        payload = {
            "k": 10,
            "queries": args.queries,
            "strategies": strategies,
            "options": options,
            "warm_cache": args.warm_cache,
            "measured": [],
        }

        def measured(row: StrategyLatency) -> None:
            payload["measured"].append(row.as_dict())
            Path(args.json_out).write_text(json.dumps(payload, indent=2))

        hooks = Hooks(
            task=task,
            advance=lambda: current and progress.advance(current[-1]),
            measured=measured,
        )
        results = run_benchmark(
            sizes, args.queries, strategies, args.home, hooks, options, args.warm_cache
        )
        finish()
    del payload["measured"]  # the finished run's rows, with ratios, are under "sizes"
    payload["sizes"] = [r.as_dict() for r in results]
    Path(args.json_out).write_text(json.dumps(payload, indent=2))
    for result in results:
        out.print(latency_table(result))
    out.print(f"results written to {args.json_out}")
    return 0


def latency_table(result: SizeResult) -> Table:
    """One size's rows: first query, p50/p95 and their ratios to dense, Python peak."""
    counts = ", ".join(f"{v:,} {k}" for k, v in result.counts.items())
    table = Table(
        title=f"retrieval latency: {result.size}",
        caption=f"{counts}. Milliseconds per query (k=10); ratios to dense in the same run; "
        "each strategy in a process of its own"
        + (
            f", after {result.warmed_mib:,.0f} MiB of its snapshot's files were read into "
            "the page cache"
            if result.warmed_mib
            else ""
        )
        + ": base = its RSS with the encoder loaded and the snapshot open, peak = its peak "
        "RSS (VmHWM, native memory included)",
    )
    headers = ("strategy", "first query / build", "p50", "p95", "p50/dense", "p95/dense",
               "base MiB", "peak MiB")  # fmt: skip
    for column in headers:
        table.add_column(column, justify="left" if column == "strategy" else "right", no_wrap=True)
    for row in result.rows:
        if row.error:
            table.add_row(row.strategy, f"[red]{row.error[:80]}[/red]", *[""] * 6)
            continue
        table.add_row(
            row.strategy,
            f"{row.first_query_ms:,.1f}",
            f"{row.p50_ms:,.1f}",
            f"{row.p95_ms:,.1f}",
            _ratio(row.ratio_to_dense.get("p50")),
            _ratio(row.ratio_to_dense.get("p95")),
            _mib(row.base_rss_mib),
            _mib(row.peak_rss_mib),
        )
    return table


def _ratio(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else ""


def _mib(value: float | None) -> str:
    return f"{value:,.0f}" if value is not None else ""
