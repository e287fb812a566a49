"""`kgmem bench extraction`: extraction throughput per backend next to the bare model.

    kgmem bench extraction [--segments 400] [--llm-segments 8] [--output bench.json]

Each backend runs in its Beam stage and alone on the same segments in this process; the
ratio is the stage's throughput over the bare model's. Results also go to a JSON file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from dagster_project.cli.common import out


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    bench = commands.add_parser(
        "bench",
        help="measure extraction throughput",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("suite", choices=["extraction"])
    bench.add_argument("--segments", type=int, default=400, help="segments for NER and relations")
    bench.add_argument("--llm-segments", type=int, default=0, help="chunks for the LLM (0: skip)")
    bench.add_argument("--output", default="bench_extraction.json", help="JSON results file")
    return bench


def run(args: argparse.Namespace) -> int:
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
