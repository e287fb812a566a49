"""`kgmem bench serve`: the served query against the same query in-process.

For each size (the sample build, or a synthetic graph of N facts, prepared as `kgmem
bench retrieval` prepares them) and each strategy, the in-process p50/p95 come from
`benchmarks.retrieval_latency.measure` (a process of its own); then one `kgmem serve`
process is started on a free loopback port, warmed with a query per strategy, and driven
by 1, 8, 32 ... concurrent clients (threads, each with its own `httpx.Client`), each
level bounded by a request count and a time limit. Per level: p50/p95 latency as the
client sees it, throughput, failed requests, and the ratio to in-process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx
import numpy as np

from benchmarks.retrieval_latency import Hooks, K, Target, measure
from benchmarks.serve_process import running_server


@dataclass
class ServedLevel:
    """One strategy at one client count: latency, throughput and failures."""

    size: str
    strategy: str
    clients: int
    requests: int
    failed: int
    seconds: float
    p50_ms: float | None
    p95_ms: float | None
    throughput_per_s: float
    in_process_p50_ms: float | None = None
    in_process_p95_ms: float | None = None
    ratio: dict[str, float | None] = field(default_factory=dict)
    """Served over in-process, for p50 and p95."""
    in_process_server_threads_p50_ms: float | None = None
    """In-process p50 under the server's thread limits (`--query-threads`, one BLAS and
    encoder thread a query by default): served minus this is what serving itself adds."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def drive(
    url: str,
    strategy: str,
    questions: Sequence[str],
    clients: int,
    requests: int,
    max_seconds: float,
) -> tuple[list[float], int, float]:
    """`requests` queries shared by `clients` concurrent clients, stopping early past
    `max_seconds` (a request started by then may take a minute more before it counts as
    failed): (latencies in seconds, failed requests, wall seconds)."""
    latencies: list[float] = []
    failed = [0]
    lock = threading.Lock()
    counter = iter(range(requests))
    deadline = time.monotonic() + max_seconds

    def client() -> None:
        with httpx.Client(base_url=url, timeout=max_seconds + 60) as http:
            while time.monotonic() < deadline:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                body = {"text": questions[n % len(questions)], "strategy": strategy, "k": K}
                started = time.perf_counter()
                try:
                    ok = http.post("/query", json=body).status_code == 200
                except httpx.HTTPError:
                    ok = False
                elapsed = time.perf_counter() - started
                with lock:
                    if ok:
                        latencies.append(elapsed)
                    else:
                        failed[0] += 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, failed[0], time.perf_counter() - started


def measure_served(
    target: Target,
    strategies: Sequence[str],
    client_counts: Sequence[int],
    requests: int,
    max_seconds: float,
    concurrency: int | None,
    workers: int,
    hooks: Hooks,
    measured: Callable[[ServedLevel], None] = lambda _row: None,
    query_threads: int | None = None,
) -> list[ServedLevel]:
    """Every strategy at every client count on `target`, with its in-process figures
    (with the default thread pools, and under the server's `query_threads` limits; with
    None, the server's "auto", one client's query gets the default pools' cores)."""
    in_process = {s: measure(target, s, requests, hooks) for s in strategies}
    server_threads = (
        {s: measure(target, s, requests, hooks, threads=query_threads) for s in strategies}
        if query_threads is not None
        else in_process
    )
    rows = []
    args = ["--mcp", "off", "--collection", target.collection]
    args += ["--query-threads", "auto" if query_threads is None else str(query_threads)]
    if concurrency is not None:
        args += ["--concurrency", str(concurrency)]
    with running_server(target.root, *args, "--workers", str(workers)) as server:
        for strategy in strategies:
            # Warm every worker: concurrent requests spread over the processes that accept.
            drive(server.url, strategy, target.questions[:1], 2 * workers, 4 * workers, 600)
            local = in_process[strategy]
            for clients in client_counts:
                hooks.task(f"{target.label}: {strategy}, {clients} clients", None)
                latencies, failed, wall = drive(
                    server.url, strategy, target.questions[1:], clients, requests, max_seconds
                )
                p50, p95 = np.percentile(latencies, [50, 95]) * 1000 if latencies else (None,) * 2
                row = ServedLevel(
                    target.label,
                    strategy,
                    clients,
                    len(latencies) + failed,
                    failed,
                    round(wall, 3),
                    _round(p50),
                    _round(p95),
                    round(len(latencies) / wall, 2) if wall else 0.0,
                    local.p50_ms,
                    local.p95_ms,
                    in_process_server_threads_p50_ms=server_threads[strategy].p50_ms,
                )
                row.ratio = {
                    "p50": _over(row.p50_ms, local.p50_ms),
                    "p95": _over(row.p95_ms, local.p95_ms),
                }
                measured(row)
                rows.append(row)
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 3)


def _over(served: float | None, local: float | None) -> float | None:
    return round(served / local, 3) if served and local else None
