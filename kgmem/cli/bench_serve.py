"""`kgmem bench serve`: served queries (HTTP, loopback) against the same queries
in-process, at 1, 8, 32 concurrent clients (`benchmarks.serve_latency`).

    kgmem bench serve [--sizes sample,100000] [--strategies dense,hybrid,hipporag_ppr]
                      [--clients 1,8,32] [--queries 40] [--serve-seconds 60]
                      [--serve-concurrency N] [--serve-workers CORES]
                      [--serve-query-threads auto] [--json-out FILE]
                      [--home DIR]

`--queries` bounds the requests of each client level (and the in-process queries),
`--serve-seconds` its time; the server binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.table import Table

from kgmem.cli.common import console, out
from kgmem.cli.serve_cmd import query_threads_arg

SERVE_STRATEGIES = ("dense", "hybrid", "hipporag_ppr")
"""What `--strategies all` measures here: the strategies the issue's targets name."""


def add_arguments(bench: argparse.ArgumentParser) -> None:
    serve = bench.add_argument_group("serve")
    serve.add_argument(
        "--clients", default="1,8,32", help="concurrent client counts, comma separated"
    )
    serve.add_argument(
        "--serve-seconds", type=float, default=60.0, help="time limit of each client level"
    )
    serve.add_argument(
        "--serve-concurrency",
        type=int,
        help="the server's --concurrency (default: the server's own default)",
    )
    serve.add_argument(
        "--serve-query-threads",
        type=query_threads_arg,
        default=None,
        metavar="N|auto",
        help="the server's --query-threads (default auto, the server's default)",
    )
    serve.add_argument(
        "--serve-workers",
        type=int,
        default=os.cpu_count() or 1,
        help="the server's --workers (default: this machine's cores)",
    )


def run(args: argparse.Namespace) -> int:
    from benchmarks.retrieval_latency import (
        Hooks,
        parse_sizes,
        prepare_sample,
        prepare_synthetic,
        resolve_strategies,
    )
    from benchmarks.serve_latency import measure_served
    from stores.workspace import Workspace

    clients = [int(c) for c in args.clients.split(",") if c.strip()]
    if not clients or min(clients) < 1 or args.queries < 1:
        raise ValueError("--clients and --queries must be positive")
    strategies = (
        list(SERVE_STRATEGIES) if args.strategies == "all" else resolve_strategies(args.strategies)
    )
    home = Workspace.at(args.home).root
    hooks = Hooks(task=lambda description, _total: console.print(description, highlight=False))
    json_out = Path(
        args.json_out if args.json_out != "bench_retrieval.json" else "bench_serve.json"
    )
    rows = []
    for size in parse_sizes(args.sizes):
        target = (
            prepare_sample(home, hooks)
            if size == "sample"
            else prepare_synthetic(home, int(size), args.queries, hooks)
        )
        rows += measure_served(
            target,
            strategies,
            clients,
            args.queries,
            args.serve_seconds,
            args.serve_concurrency,
            args.serve_workers,
            hooks,
            query_threads=args.serve_query_threads,
        )
        json_out.write_text(json.dumps([r.as_dict() for r in rows], indent=2))
    out.print(served_table(rows))
    out.print(f"results written to {json_out}")
    return 0


def served_table(rows: list) -> Table:  # list[ServedLevel]
    table = Table(
        title="served queries (HTTP on loopback) against in-process",
        caption="milliseconds per query as the client sees it (k=10); in-process figures "
        "from a process of its own, with the default thread pools and with the server's "
        "(--serve-query-threads); ratio = served / in-process; added = served "
        "p50 - in-process p50 on the server's threads, what serving itself costs",
    )
    headers = ("size", "strategy", "clients", "requests", "failed", "p50", "p95",
               "req/s", "in-proc p50", "in-proc p95", "p50 ratio", "p95 ratio",
               "in-proc p50, server threads", "added p50")  # fmt: skip
    for column in headers:
        table.add_column(column, justify="left" if column in ("size", "strategy") else "right")
    for r in rows:
        table.add_row(
            r.size,
            r.strategy,
            str(r.clients),
            str(r.requests),
            str(r.failed),
            _num(r.p50_ms),
            _num(r.p95_ms),
            _num(r.throughput_per_s),
            _num(r.in_process_p50_ms),
            _num(r.in_process_p95_ms),
            _num(r.ratio.get("p50"), 2),
            _num(r.ratio.get("p95"), 2),
            _num(r.in_process_server_threads_p50_ms),
            _num(_minus(r.p50_ms, r.in_process_server_threads_p50_ms)),
        )
    return table


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _num(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:,.{digits}f}"
