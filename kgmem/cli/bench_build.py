"""`kgmem bench build`: the options and tables of `benchmarks.build_cost`.

    kgmem bench build [--documents 1000] [--sizes N1,N2] [--queries 50] [--strategies all]
                      [--json-out bench_build.json] [--home DIR] [--llm] [--seed 0]
                      [--bare-segments 2000]

`--sizes`, `--queries`, `--strategies`, `--json-out` and `--home` are the options `kgmem
bench retrieval` declares; for this suite `--sizes` are document counts of the memory
builds (default: a tenth and a half of --documents) and `--json-out` defaults to
bench_build.json. Progress goes to stderr, one line per finished step when it is not a
terminal (a log file), the tables to stdout.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from kgmem.cli.common import console, out, route_library_logs
from stores.workspace import Workspace

if TYPE_CHECKING:
    from benchmarks.build_cost import BuildBenchResult
    from benchmarks.retrieval_latency import Hooks

DEFAULT_JSON = "bench_build.json"


def add_arguments(bench: argparse.ArgumentParser) -> None:
    """The build suite's own options; remembers the shared options' retrieval defaults so
    that `run` can tell them from values given on the command line."""
    group = bench.add_argument_group("build")
    group.add_argument("--documents", type=int, default=1000, help="documents to generate")
    group.add_argument("--llm", action="store_true", help="keep the configured LLM stage")
    group.add_argument("--seed", type=int, default=0, help="seed of the generated collection")
    group.add_argument(
        "--bare-segments", type=int, default=2000, help="segments for the bare models (0: all)"
    )
    bench.set_defaults(
        build_shared_defaults={
            "sizes": bench.get_default("sizes"),
            "json_out": bench.get_default("json_out"),
        }
    )


@contextmanager
def progress_hooks() -> Iterator[Hooks]:
    """Hooks that show each step as a rich progress line (stderr), closed when done."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from benchmarks.retrieval_latency import Hooks

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        current: list[int] = []

        def finish() -> None:
            if current:
                task = progress.tasks[-1]
                progress.update(current[-1], visible=False)
                if not console.is_terminal:
                    console.print(f"{task.description}: {task.elapsed or 0:.1f} s")

        def start(description: str, total: int | None) -> None:
            finish()
            current.append(progress.add_task(description, total=total))

        yield Hooks(task=start, advance=lambda: current and progress.advance(current[-1]))
        finish()


def run(args: argparse.Namespace) -> int:
    from benchmarks.build_cost import parse_sizes
    from benchmarks.build_cost import run as run_benchmark
    from kgmem.cli.bench_cmd import latency_table

    shared = args.build_shared_defaults
    sizes = parse_sizes(args.sizes) if args.sizes != shared["sizes"] else None
    json_out = Path(args.json_out if args.json_out != shared["json_out"] else DEFAULT_JSON)
    with progress_hooks() as hooks:
        result = run_benchmark(
            args.documents,
            sizes=sizes,
            queries=args.queries,
            home=args.home,
            llm=args.llm,
            strategies=args.strategies,
            seed=args.seed,
            bare_segments=args.bare_segments or None,
            hooks=hooks,
            worker_setup=functools.partial(
                route_library_logs, Workspace.at(args.home).root, args.verbose
            ),
        )
    json_out.write_text(json.dumps(result.as_dict(), indent=2))
    for table in (throughput_table(result), encoded_texts_table(result), rerun_table(result),
                  stage_table(result), memory_table(result),
                  latency_table(result.latency)):  # fmt: skip
        out.print(table)
    out.print(f"results written to {json_out}")
    return 0


def _table(title: str, headers: tuple[str, ...], caption: str | None = None) -> Table:
    table = Table(title=title, caption=caption)
    for i, column in enumerate(headers):
        table.add_column(column, justify="left" if i == 0 else "right", no_wrap=True)
    return table


def throughput_table(result: BuildBenchResult) -> Table:
    """The whole build against each bare model and all of them in sequence."""
    bare = result.bare
    table = _table(
        f"build throughput: {result.documents:,} documents + {result.conversations} "
        f"conversations, llm {result.llm_backend}",
        ("", "segments", "seconds", "segments/s", "build / this"),
        caption=f"{result.segments:,} extractable segments in the full build; bare models in "
        f"the same process on {bare.segments:,} segments of the build after the re-runs "
        "(loading not timed)",
    )
    build_rate = result.throughput_per_s
    table.add_row("whole build", f"{result.segments:,}", f"{result.full.seconds:,.1f}",
                  f"{build_rate:,.1f}", "1.00")  # fmt: skip
    for name, rate in bare.per_model.items():
        table.add_row(f"bare: {name}", f"{bare.segments:,}", "", f"{rate:,.1f}",
                      f"{build_rate / rate:.3f}")  # fmt: skip
    table.add_row("bare: all models in sequence", f"{bare.segments:,}", "",
                  f"{bare.combined_per_s:,.1f}",
                  f"{result.ratios()['build_over_bare_models']:.3f}")  # fmt: skip
    return table


def encoded_texts_table(result: BuildBenchResult) -> Table:
    """The full build's time against the bare models' over the texts it ran them on: the
    segment models on every segment, each encoder on the distinct texts it encoded."""
    from benchmarks.build_cost import SEGMENT_ENCODER

    bare = result.bare
    ratio = result.ratios()["full_build_over_bare_seconds"]
    table = _table(
        "full build against the bare models over the texts it encoded",
        ("", "texts", "sampled", "texts/s", "bare seconds"),
        caption=f"full build {result.full.seconds:,.1f} s = {ratio:.2f} x the bare models' "
        f"{bare.seconds:,.1f} s (rates measured on the samples, loading not timed)",
    )
    for name, rate in bare.per_model.items():
        if name != SEGMENT_ENCODER:
            table.add_row(f"{name}: segments", f"{bare.build_segments:,}",
                          f"{bare.segments:,}", f"{rate:,.1f}",
                          f"{bare.build_segments / rate:,.1f}")  # fmt: skip
    for e in bare.encoders:
        unmatched = f" (+{e.unmatched:,} unrecovered)" if e.unmatched else ""
        table.add_row(f"{e.label}: {e.model}", f"{e.texts:,}{unmatched}", f"{e.sampled:,}",
                      f"{e.per_s:,.1f}", f"{e.seconds:,.1f}")  # fmt: skip
    table.add_row("all bare models", "", "", "", f"{bare.seconds:,.1f}")
    return table


def rerun_table(result: BuildBenchResult) -> Table:
    """Full build, unchanged re-run and 1 % new documents: wall time and LLM calls."""
    table = _table("re-run cost", ("build", "documents", "seconds", "/ full build", "LLM calls"))
    for run in (result.full, result.rerun_unchanged, result.rerun_new):
        table.add_row(run.label, f"{run.documents:,}", f"{run.seconds:,.1f}",
                      f"{run.seconds / result.full.seconds:.3f}", str(run.llm_calls))  # fmt: skip
    return table


def stage_table(result: BuildBenchResult) -> Table:
    """Seconds per stage (as the stage reports them) in each of the three builds."""
    runs = (result.full, result.rerun_unchanged, result.rerun_new)
    table = _table("seconds per stage", ("stage", *(r.label for r in runs)))
    by_run = [{s["stage"]: s for s in r.stages} for r in runs]
    for stage in by_run[0]:
        cells = []
        for stages in by_run:
            s = stages.get(stage)
            cells.append("" if s is None else f"{s['seconds']:,.1f}{' (skip)' * s['skipped']}")
        table.add_row(stage, *cells)
    return table


def memory_table(result: BuildBenchResult) -> Table:
    """Peak RSS of a fresh build per size, per 1,000 facts."""
    from benchmarks.build_cost import marginal_mib_per_1k_facts

    marginal = marginal_mib_per_1k_facts(result.memory)
    table = _table(
        "peak resident memory of a build (fresh process per size)",
        ("documents", "facts", "build s", "peak RSS MiB", "MiB / 1k facts"),
        caption="peak: the build process's VmHWM; growth between sizes: "
        + (f"{marginal:,.2f} MiB per 1k more facts" if marginal is not None else "n/a"),
    )
    for m in result.memory:
        table.add_row(f"{m.documents:,}", f"{m.facts:,}", f"{m.build_seconds:,.1f}",
                      f"{m.peak_rss_mib:,.0f}", f"{m.mib_per_1k_facts:,.1f}")  # fmt: skip
    return table
