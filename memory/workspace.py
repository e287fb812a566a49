"""Where a kgmem workspace keeps its stores, and how to open them.

A workspace is one folder: `warehouse.duckdb` (documents, segments, mentions, facts,
quarantine, snapshots), `lance/` (embedding tables), `parquet/` (Beam stage exchange)
and `dagster/` (the Dagster instance used by the CLI and the UI). The folder comes from
`KGMEM_HOME`, else `./kgmem_home`.
"""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import lancedb

from schemas.warehouse import DDL

HOME_ENV = "KGMEM_HOME"
DEFAULT_HOME = "kgmem_home"
LOCK_TIMEOUT_S = 600.0
"""How long opening the warehouse waits while another process holds its file lock."""
_COLLECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def default_home() -> Path:
    """The workspace folder named by `KGMEM_HOME`, else `./kgmem_home` (absolute)."""
    return Path(os.environ.get(HOME_ENV, DEFAULT_HOME)).resolve()


def check_collection_name(name: str) -> str:
    """Return `name` if it is a valid collection name, else raise ValueError saying why."""
    if not _COLLECTION_NAME.match(name):
        raise ValueError(
            f"invalid collection name {name!r}: use 1-63 lowercase letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def connect_waiting(
    path: str | Path, read_only: bool = False, timeout_s: float = LOCK_TIMEOUT_S
) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB file, waiting (jittered backoff) while another process holds its lock.

    DuckDB admits one writing process per file; processes that open, run one transaction and
    close (as every stage does) therefore take turns instead of failing."""
    deadline = time.monotonic() + timeout_s
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise
        time.sleep(delay * (0.5 + random.random() / 2))
        delay = min(delay * 2, 1.0)


@dataclass(frozen=True)
class Workspace:
    """Paths and connections of one workspace folder."""

    root: Path

    @classmethod
    def at(cls, root: str | Path | None = None) -> Workspace:
        return cls(Path(root).resolve() if root else default_home())

    @property
    def warehouse_path(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def lance_path(self) -> Path:
        return self.root / "lance"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    def parquet_dir(self, collection: str, stage: str) -> Path:
        return self.root / "parquet" / check_collection_name(collection) / stage

    def connect(self, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        """Open the warehouse (waiting while another process writes it); a writable
        connection creates missing tables first."""
        if read_only:
            if not self.warehouse_path.exists():
                raise FileNotFoundError(
                    f"no kgmem warehouse at {self.warehouse_path}; run `kgmem build` first "
                    f"or point {HOME_ENV} at the workspace"
                )
            return connect_waiting(self.warehouse_path, read_only=True)
        self.root.mkdir(parents=True, exist_ok=True)
        con = connect_waiting(self.warehouse_path)
        for statement in DDL:
            con.execute(statement)
        return con

    def lance(self) -> lancedb.DBConnection:
        self.lance_path.mkdir(parents=True, exist_ok=True)
        return lancedb.connect(str(self.lance_path))


def lance_table_name(collection: str, kind: str) -> str:
    """Name of the LanceDB table holding `kind` rows ("segments", "entities") of a collection."""
    return f"{check_collection_name(collection)}__{kind}"
