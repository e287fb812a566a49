"""`kgmem bench reliability`: the options and the table of `benchmarks.reliability`.

    kgmem bench reliability [--input PATH ...] [--kill-stages all|a,b] [--threads 4]
                            [--work DIR] [--json-out bench_reliability.json]

`--input` is the corpus of the kill, query and concurrent-build checks (default: the
bundled sample corpus, `sample_corpus/documents` and `sample_corpus/conversations`);
`--kill-stages` the stages at whose start a build is killed (default: every stage);
`--work` the folder the workspaces are made in (default: a new temporary folder, removed
afterwards); `--json-out` the results file (default bench_reliability.json). The exit
status is 1 when any check found a problem.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from rich.table import Table

from kgmem.cli.common import console, out

DEFAULT_CORPUS = ("sample_corpus/documents", "sample_corpus/conversations")
DEFAULT_JSON = "bench_reliability.json"
QUERIES = (
    "Who is the CEO of Acme Corporation?",
    "Which city is Priya Natarajan's office in?",
    "printer error E-42 came back after the firmware update",
)


def add_arguments(bench: argparse.ArgumentParser) -> None:
    group = bench.add_argument_group("reliability")
    group.add_argument(
        "--input", action="append", metavar="PATH", help="corpus (default: the sample corpus)"
    )
    group.add_argument("--kill-stages", default="all", help="'all' or stage names, comma separated")
    group.add_argument("--threads", type=int, default=4, help="query threads beside a build")
    group.add_argument("--work", help="folder for the workspaces (default: a temporary one)")


def run(args: argparse.Namespace) -> int:
    from benchmarks.reliability import run_reliability
    from dagster_project.build import stage_order
    from dagster_project.definitions import kgmem_definitions

    defs = kgmem_definitions()

    corpus = [Path(p) for p in (args.input or DEFAULT_CORPUS)]
    missing = [str(p) for p in corpus if not p.exists()]
    if missing:
        raise FileNotFoundError(f"corpus not found: {', '.join(missing)} (give --input PATH)")
    every = [key.to_user_string() for key in stage_order(defs)]
    stages = every if args.kill_stages == "all" else args.kill_stages.split(",")
    unknown = sorted(set(stages) - set(every))
    if unknown:
        raise ValueError(f"unknown stage(s) {', '.join(unknown)}; stages: {', '.join(every)}")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kgmem-rel-")) / "w"
    console.print(f"reliability checks in {work} ({len(stages)} kill point(s))")
    try:
        report = run_reliability(work, corpus, stages, QUERIES, args.threads)
    finally:
        if not args.work:
            shutil.rmtree(work.parent, ignore_errors=True)
    shared_default = args.json_out == "bench_retrieval.json"  # --json-out not given
    json_out = Path(DEFAULT_JSON if shared_default else args.json_out)
    json_out.write_text(json.dumps(report.as_dict(), indent=2))
    table = Table(title="reliability")
    for column in ("check", "tried", "clean", "failed / lost"):
        table.add_column(column, justify="left" if column == "check" else "right")
    rows = (
        ("bad inputs (kinds)", report.bad_inputs_tried, report.bad_inputs_handled, None),
        ("bad arguments (kinds)", report.bad_arguments_tried, report.bad_arguments_refused, None),
        ("kill -9, then re-run", report.kills, report.identical_reruns, None),
        ("queries beside a build", report.concurrent_queries, None, report.failed_queries),
        ("concurrent builds", report.concurrent_builds, None, report.failed_builds),
        ("records lost", None, None, report.records_lost),
    )
    for name, tried, clean, failed in rows:
        table.add_row(name, *("" if v is None else str(v) for v in (tried, clean, failed)))
    out.print(table)
    for problem in report.problems:
        console.print(f"[red]problem:[/red] {problem}", highlight=False)
    return 1 if report.problems else 0
