"""`kgmem serve` started as a separate process on a free loopback port, for `kgmem bench
serve` and the tests: its URL once it listens and answers `/health`, stopped (terminated,
then killed) at the end of the block."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

LISTENING = re.compile(r"listening on (http://\S+?:\d+)")


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    stderr: list[str] = field(default_factory=list)


def serve_command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "kgmem.cli.app", "serve", "--home", str(home), *args]


@contextlib.contextmanager
def running_server(
    home: Path, *args: str, token: str | None = None, timeout_s: float = 120.0
) -> Iterator[Server]:
    """`kgmem serve --home home --port 0 *args`, up and answering, as a `Server`."""
    process = subprocess.Popen(
        serve_command(home, "--port", "0", *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    found = threading.Event()

    def drain() -> None:
        for line in process.stderr:
            lines.append(line)
            if LISTENING.search(line):
                found.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        deadline = time.monotonic() + timeout_s
        while not found.wait(0.1):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kgmem serve did not start: {''.join(lines)}")
        url = next(m.group(1) for m in map(LISTENING.search, lines) if m)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/health", headers=headers, timeout=5).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"kgmem serve never answered: {''.join(lines)}")
            time.sleep(0.1)
        yield Server(url, process, lines)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
