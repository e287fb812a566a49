"""`kgmem serve`: a read-only server over a workspace's snapshots, as an HTTP JSON API
and as MCP tools (stdio or streamable HTTP at `/mcp`)."""

from __future__ import annotations

import argparse
import ipaddress
import os
from pathlib import Path
from typing import TYPE_CHECKING

from kgmem.cli.common import add_home, console

if TYPE_CHECKING:
    from memory.serving.core_budget import CoreBudget
    from memory.serving.pool import SnapshotPool

DEFAULT_PORT = 8765


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    serve = commands.add_parser(
        "serve",
        help="serve snapshots to agents: HTTP JSON API (with OpenAPI docs) and MCP tools",
        description="Serve a workspace's snapshots read-only: POST /query, GET /facts, "
        "GET /entities/{name}, GET /snapshots, GET /health, docs at /docs; MCP tools "
        "search_memory, get_facts, get_entity, list_snapshots at /mcp (--mcp http) or on "
        "stdin/stdout (--mcp stdio, for an MCP client that starts the server itself).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)"
    )
    serve.add_argument(
        "--snapshot",
        default="latest",
        help="snapshot id to pin, or `latest` (default): follow new builds without a restart",
    )
    serve.add_argument("--collection", help="serve only this collection's snapshots")
    serve.add_argument(
        "--mcp",
        choices=["http", "stdio", "off"],
        default="http",
        help="http: MCP at /mcp beside the JSON API (default); stdio: MCP on stdin/stdout "
        "only, no HTTP; off: the JSON API only",
    )
    serve.add_argument(
        "--token-file",
        type=Path,
        help="file holding a bearer token that every request must send "
        "(required to bind a non-loopback address)",
    )
    serve.add_argument(
        "--concurrency",
        type=int,
        help="requests each server process answers at once (default: cores / workers, at "
        "least 2); the others wait their turn",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes sharing the port (default 1); more answer more queries at "
        "once on a machine with more cores, each holding its own copy of the snapshot",
    )
    serve.add_argument(
        "--poll",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often `latest` looks for a new snapshot (default 1)",
    )
    serve.add_argument(
        "--query-threads",
        type=query_threads_arg,
        default=None,
        metavar="N|auto",
        help="BLAS and second-encoder threads of one query (default auto: every core for "
        "a query no other query of the server runs beside, one each otherwise)",
    )
    add_home(serve)
    return serve


def run(args: argparse.Namespace) -> int:
    from memory.serving.process import read_token

    token = read_token(args.token_file) if args.token_file else None
    if args.mcp != "stdio" and token is None and not is_loopback(args.host):
        raise ValueError(
            f"--host {args.host} is not a loopback address: pass --token-file to require "
            "a bearer token, or bind 127.0.0.1"
        )
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0..65535, got {args.port}")
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    if args.workers > 1 and args.mcp == "stdio":
        raise ValueError("--workers serves HTTP: MCP over stdio has one client, one process")
    if args.concurrency is None:
        args.concurrency = default_concurrency(args.workers)
    if args.concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, got {args.concurrency}")

    from memory.serving.core_budget import CoreBudget
    from memory.serving.pool import SnapshotPool
    from memory.serving.process import limit_query_threads

    limit_query_threads(args.query_threads)
    cores = CoreBudget.create() if args.query_threads is None else None
    pool = SnapshotPool(
        args.home, args.snapshot, args.collection, poll_s=args.poll, preload=args.workers == 1
    )
    try:
        if args.mcp == "stdio":
            return serve_stdio(pool, args.concurrency, cores)
        return serve_http(pool, args, token, cores)
    finally:
        pool.close()
        if cores is not None:
            cores.remove()


def serve_stdio(pool: SnapshotPool, concurrency: int, cores: CoreBudget | None) -> int:
    """MCP over stdin/stdout until the client closes it."""
    import anyio

    from memory.serving.main_thread import MainThreadRunner
    from memory.serving.mcp_tools import memory_server

    pool.start_watching()
    runner = MainThreadRunner(concurrency, cores)
    runner.serve(lambda: anyio.run(memory_server(pool, runner).run_stdio_async))
    return 0


def serve_http(
    pool: SnapshotPool, args: argparse.Namespace, token: str | None, cores: CoreBudget | None
) -> int:
    """The JSON API (and MCP at /mcp) on `args.host:args.port` until interrupted, in this
    process or in `args.workers` processes (`memory.serving.process`)."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    host, port = sock.getsockname()[:2]
    where = f"[{host}]" if family == socket.AF_INET6 else host
    workers = f", {args.workers} workers" if args.workers > 1 else ""
    console.print(
        f"kgmem serve: listening on http://{where}:{port} (snapshot {pool.default_id}"
        f"{', pinned' if pool.pinned else ', following latest'}{workers}; docs at /docs"
        f"{', MCP at /mcp' if args.mcp == 'http' else ''})",
        highlight=False,
        soft_wrap=True,
    )
    if args.workers > 1:
        return serve_workers(pool, args, sock, cores)
    from memory.serving.main_thread import MainThreadRunner
    from memory.serving.process import server_app

    runner = MainThreadRunner(args.concurrency, cores)
    app = server_app(pool, token, runner, args.mcp == "http", args.host)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    runner.serve(lambda: server.run(sockets=[sock]), server.handle_exit)
    return 0


def serve_workers(
    pool: SnapshotPool, args: argparse.Namespace, sock: object, cores: CoreBudget | None
) -> int:
    """`args.workers` processes on `sock`, under uvicorn's supervisor, each serving what
    `pool` resolved (a pinned snapshot stays the same snapshot in every worker)."""
    import uvicorn

    from memory.serving.process import WorkerSettings, supervised_workers

    WorkerSettings(
        home=str(pool.workspace.root),
        snapshot=pool.pinned or "latest",
        collection=args.collection,
        poll_s=args.poll,
        token_file=str(args.token_file.resolve()) if args.token_file else None,
        concurrency=args.concurrency,
        query_threads=args.query_threads,
        core_budget=str(cores.path) if cores is not None else None,
        mcp_http=args.mcp == "http",
        host=args.host,
    ).to_environment()
    config = uvicorn.Config(
        "memory.serving.process:worker_app",
        factory=True,
        workers=args.workers,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    supervised_workers(config, sock).run()  # type: ignore[arg-type]
    return 0


def query_threads_arg(value: str) -> int | None:
    """`--query-threads`: "auto" (None) or a thread count of at least 1."""
    if value == "auto":
        return None
    try:
        threads = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or auto, got {value!r}") from None
    if threads < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {threads}")
    return threads


def default_concurrency(workers: int) -> int:
    """Requests a process answers at once by default: the cores each worker has, at
    least 2 (so one slow request, a `/facts` waiting for a build's lock, does not hold
    the others). A query is CPU-bound, and more threads than cores only take turns on
    the interpreter lock and the cores: `kgmem bench serve --sizes sample --strategies
    dense --queries 600` with 2 workers on 2 cores answered 8 clients at 1.80x the
    throughput of one with 1 request a worker at once, 1.70x with 2, 1.42x-1.64x
    (three runs) with 8."""
    return max(2, (os.cpu_count() or 1) // workers)


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
