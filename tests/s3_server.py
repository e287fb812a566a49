"""A real S3-compatible server for the object-storage tests: moto's server mode, started
as a separate process on the loopback address, and reached by the real clients (pyarrow,
LanceDB, Beam's boto3 filesystem, boto3 here). Nothing is mocked inside the process under
test: the server is the only stand-in, at the process boundary, for AWS S3 or MinIO."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

START_TIMEOUT_S = 60.0
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    """A running server: its endpoint, and the environment that points clients at it."""

    endpoint: str

    @property
    def env(self) -> dict[str, str]:
        """The standard AWS variables a kgmem process reads (`stores.data_url`)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "kgmem-test",
            "AWS_SECRET_ACCESS_KEY": "kgmem-test-secret",
            "AWS_REGION": REGION,
        }

    def client(self) -> Any:
        """A boto3 S3 client of the server."""
        import boto3

        env = self.env
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        )

    def new_bucket(self) -> str:
        """Create a bucket of its own for one test; its name."""
        name = f"kgmem-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str) -> list[str]:
        """Every object key in `bucket`."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return [item["Key"] for page in pages for item in page.get("Contents", [])]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_s3_server(log: Path) -> Iterator[S3Server]:
    """moto's server on a free loopback port for the duration of the block (skips when
    moto is not installed: it is pinned in requirements.lock, so CI has it)."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed (requirements.lock)")
    pytest.importorskip("boto3", reason="boto3 is not installed (requirements.lock)")
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with open(log, "wb") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_up(server, endpoint, log)
        yield S3Server(endpoint)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _wait_until_up(server: subprocess.Popen, endpoint: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"moto server exited ({server.returncode}): {log.read_text()}")
        try:
            with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"moto server not up at {endpoint} after {START_TIMEOUT_S:.0f} s")
