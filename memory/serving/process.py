"""How a `kgmem serve` process sets itself up, in one process or as one of `--workers N`.

With `--workers N` (N > 1) the HTTP server runs as N processes that share the listening
socket, supervised by uvicorn's `Multiprocess` (which restarts a worker that dies and
stops them all on SIGINT/SIGTERM). A query's Python work (tokenising, ranking, building
the JSON) holds the interpreter lock, so threads in one process answer about one query at
a time however many cores there are; processes do not. Measured with `kgmem bench serve
--sizes sample --strategies dense --clients 1,2,8 --queries 400` on 2 cores: one process
answered 112 requests/s to one client and 116 to eight (1.03x).

Each worker opens its own pool (its own snapshot views and encoders, so memory grows
with N) from `WorkerSettings`, which the parent puts in the environment as JSON, and
follows `latest` on its own. MCP over HTTP then runs stateless: a session kept in one
worker's memory could not be found by a request that lands on another, and the memory
tools keep no state between calls anyway. Each worker, like a single server process,
runs its event loop on a thread and its queries on its main thread
(`memory.serving.main_thread`): uvicorn's worker process class is replaced by
`MainThreadWorker`, which does that around the server uvicorn would run.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from socket import socket
from typing import TYPE_CHECKING

from uvicorn.supervisors import multiprocess

from memory.serving.core_budget import CoreBudget
from memory.serving.main_thread import MainThreadRunner

if TYPE_CHECKING:
    from starlette.types import ASGIApp
    from uvicorn import Config

    from memory.serving.pool import SnapshotPool

WORKER_SETTINGS_ENV = "KGMEM_SERVE_WORKER"
"""The environment variable that carries `WorkerSettings` to each worker process."""


@dataclass(frozen=True)
class WorkerSettings:
    """What a worker needs to build the same app as the parent would: the workspace and
    snapshot to serve, the token file (read again by each worker, so the token is never
    put in the environment), limits, and whether MCP is served at `/mcp`."""

    home: str
    snapshot: str
    collection: str | None
    poll_s: float
    token_file: str | None
    concurrency: int
    query_threads: int | None
    core_budget: str | None
    mcp_http: bool
    host: str

    def to_environment(self) -> None:
        os.environ[WORKER_SETTINGS_ENV] = json.dumps(asdict(self))

    @classmethod
    def from_environment(cls) -> WorkerSettings:
        try:
            return cls(**json.loads(os.environ[WORKER_SETTINGS_ENV]))
        except KeyError:
            raise RuntimeError(
                f"{WORKER_SETTINGS_ENV} is not set: a worker is started by `kgmem serve`"
            ) from None


class MainThreadWorker(multiprocess.Process):
    """One of uvicorn's worker processes, its server's event loop on a thread and its
    queries on its main thread (`worker_runner`)."""

    def target(self, sockets: list[socket] | None = None) -> None:
        threading.Thread(target=self.always_pong, daemon=True).start()
        worker_runner().serve(lambda: self.server.run(sockets), self.server.handle_exit)


def supervised_workers(config: Config, sock: socket) -> multiprocess.Multiprocess:
    """uvicorn's supervisor of `config.workers` processes on `sock`, each a
    `MainThreadWorker` (uvicorn builds its worker processes from its module's `Process`
    class and takes no other, so the class is replaced there)."""
    multiprocess.Process = MainThreadWorker  # type: ignore[misc]
    return multiprocess.Multiprocess(config, sockets=[sock])


@functools.cache
def worker_runner() -> MainThreadRunner:
    """The runner of this worker process's queries, `WorkerSettings.concurrency` at once,
    under the server's core budget with `--query-threads auto`."""
    settings = WorkerSettings.from_environment()
    cores = CoreBudget(Path(settings.core_budget)) if settings.core_budget else None
    return MainThreadRunner(settings.concurrency, cores)


def worker_app() -> ASGIApp:
    """The app of one `--workers` process (uvicorn's factory, called in the worker)."""
    settings = WorkerSettings.from_environment()
    from memory.serving.pool import SnapshotPool

    limit_query_threads(settings.query_threads)
    pool = SnapshotPool(
        settings.home, settings.snapshot, settings.collection, poll_s=settings.poll_s
    )
    token = read_token(Path(settings.token_file)) if settings.token_file else None
    return server_app(
        pool, token, worker_runner(), settings.mcp_http, settings.host, stateless=True
    )


def server_app(
    pool: SnapshotPool,
    token: str | None,
    runner: MainThreadRunner,
    mcp_http: bool,
    host: str,
    stateless: bool = False,
) -> ASGIApp:
    """The JSON API over `pool`, its work run by `runner`, with MCP at `/mcp` when
    `mcp_http`."""
    from memory.serving.http_app import ServeSettings, create_app
    from memory.serving.mcp_tools import memory_server

    mcp_app = None
    if mcp_http:
        mcp_app = memory_server(pool, runner).streamable_http_app(
            host=host, stateless_http=stateless
        )
    return create_app(pool, ServeSettings(token), runner, mcp_app)


def limit_query_threads(threads: int | None) -> None:
    """Hold OpenBLAS and the second encoder (`KGMEM_ENCODER_THREADS`, unless set) to
    `threads` threads for the process's life; with None (`--query-threads auto`),
    OpenBLAS to one thread outside a query's share and the encoder at its default, since
    each query sets both (`CoreBudget.share`). OpenBLAS's limit is the process's, so a
    query's share ends by restoring it while another query may run: one thread is what
    that query can keep. Measured on the sample (`kgmem bench serve`, 2 cores): with each
    query's pools at their defaults, 8 concurrent `dense` clients waited 9.3 s per query
    at the median against 0.47 s for one client, every query's OpenBLAS pool spinning on
    the cores the others needed; with auto and OpenBLAS at its default between queries,
    eight clients got 1.11x one client's throughput (sample) against 1.74x with one."""
    import numpy  # noqa: F401 - OpenBLAS loaded, so the limit reaches it
    from threadpoolctl import threadpool_limits

    if threads is not None:
        os.environ.setdefault("KGMEM_ENCODER_THREADS", str(threads))
    threadpool_limits(limits=threads or 1, user_api="blas")


def read_token(path: Path) -> str:
    """The bearer token in `path` (surrounding whitespace dropped); a ValueError if the
    file is unreadable or empty."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ValueError(f"--token-file {path}: cannot read it ({exc.strerror})") from None
    if not token:
        raise ValueError(f"--token-file {path}: the file is empty")
    return token
