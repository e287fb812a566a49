"""Where a kgmem workspace keeps its stores, and how to open them.

A workspace is one folder: `warehouse.duckdb` (documents, segments, mentions, facts,
quarantine, snapshots), `lance/` (embedding tables), `parquet/` (Beam stage exchange),
`graph_index/` (per-snapshot indexes), `models/rgcn/` (warm-start weights) and `dagster/`
(the Dagster instance used by the CLI and the UI). The folder comes from `KGMEM_HOME`,
else `./kgmem_home`.

The shared data, `lance/`, `parquet/`, `graph_index/` and `models/rgcn/`, may live under a
data URL instead (`stores.data_url`: `s3://bucket/prefix` or a shared folder), so that
Beam workers and query processes on other hosts read and write the same data. The rest
stays in the folder: the DuckDB catalog (one writer at a time by DuckDB's design; it pins
which LanceDB versions a snapshot reads), the Dagster instance, caches (embeddings, the
LLM answers, downloaded graph indexes), locks, logs, progress files and settings.

The workspace remembers its data URL in `<home>/workspace.json`, written by the first
writable connection: a plain file rather than a catalog row, so that any process (a
query, the Dagster UI, a sensor) finds the data without DuckDB's file lock, which a
running build holds. Later commands on the same home need no `--data-url`; a different
one is refused, and so is a data URL for a home whose data already lives in its folder
(its tables would not be found there).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from stores.data_url import (
    DATA_URL_ENV,
    check_reachable,
    is_remote,
    join,
    lance_storage_options,
    normalize,
)
from transforms.workspace_home import DEFAULT_HOME, HOME_ENV, default_home

if TYPE_CHECKING:
    import duckdb
    import lancedb

__all__ = [
    "DATA_URL_ENV",
    "DEFAULT_HOME",
    "HOME_ENV",
    "Workspace",
    "check_collection_name",
    "default_home",
    "lance_table_name",
]

WORKSPACE_FILE = "workspace.json"
"""Where a workspace records its data URL."""
SHARED_FOLDERS = ("lance", "parquet", "graph_index")
"""Folders of the shared data in a workspace that keeps it locally."""
_COLLECTION_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


def check_collection_name(name: str) -> str:
    """Return `name` if it is a valid collection name, else raise ValueError saying why."""
    if not _COLLECTION_NAME.match(name):
        raise ValueError(
            f"invalid collection name {name!r}: use 1-63 lowercase letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


@dataclass(frozen=True)
class Workspace:
    """Paths and connections of one workspace folder and of its shared data."""

    root: Path
    data_url: str | None = None
    """Where the shared data lives (`stores.data_url`, canonical); None: in `root`."""

    @classmethod
    def at(cls, root: str | Path | None = None, data_url: str | None = None) -> Workspace:
        """The workspace at `root` (default `KGMEM_HOME`) with its data URL: the one it
        recorded, else `data_url`, else `KGMEM_DATA_URL`; a ValueError if they differ."""
        folder = Path(root).resolve() if root else default_home()
        return cls(folder, resolve_data_url(folder, data_url))

    @property
    def data(self) -> str:
        """Base location of the shared data: the data URL, or the folder itself."""
        return self.data_url or str(self.root)

    @property
    def data_is_remote(self) -> bool:
        return is_remote(self.data)

    @property
    def warehouse_path(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def lance_path(self) -> str:
        """The LanceDB database: a folder, or a URL under the data URL."""
        return join(self.data, "lance")

    @property
    def embedding_cache_path(self) -> Path:
        """Vectors by (encoder, role, text hash), shared by every collection and build."""
        return self.root / "cache" / "embeddings.duckdb"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    def rgcn_model_path(self, collection: str) -> str:
        """The collection's last R-GCN weights, for a warm start (`stores.structure_table`)."""
        return join(self.data, "models", "rgcn", f"{check_collection_name(collection)}.npz")

    def parquet_dir(self, collection: str, stage: str) -> str:
        """The stage's Parquet hand-off folder (a path or a URL under the data URL)."""
        return join(self.data, "parquet", check_collection_name(collection), stage)

    def progress_file(self, collection: str, stage: str) -> Path:
        """Where a running stage counts its rows done (`transforms.progress`): always in
        the workspace folder, which the command line showing it polls."""
        from transforms.progress import stage_progress_file  # numpy: not for light commands

        return stage_progress_file(
            self.root / "progress" / check_collection_name(collection) / stage
        )

    def record_data_url(self) -> None:
        """Check that the data URL can be reached, so that a build fails at once with a
        one-line error rather than at its first write, and record it in the folder if it
        is not yet (`resolve_data_url` checks the ones given later)."""
        if self.data_url is None:
            return
        check_reachable(self.data_url)
        if recorded_data_url(self.root) is None:
            self.root.mkdir(parents=True, exist_ok=True)
            record = json.dumps({"data_url": self.data_url}, indent=1)
            staging = self.root / f".{WORKSPACE_FILE}.{os.getpid()}.tmp"
            staging.write_text(record + "\n", encoding="utf-8")
            os.replace(staging, self.root / WORKSPACE_FILE)

    def connect(self, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        """Open the warehouse (waiting while another process writes it); a writable
        connection records the data URL and creates missing tables first. DuckDB and the
        table declarations are imported on use, so that `kgmem --help` and argument errors
        load neither."""
        from transforms.duckdb_connect import connect_waiting

        if read_only:
            if not self.warehouse_path.exists():
                raise FileNotFoundError(
                    f"no kgmem warehouse at {self.warehouse_path}; run `kgmem build` first "
                    f"or point {HOME_ENV} at the workspace"
                )
            return connect_waiting(self.warehouse_path, read_only=True)
        self.root.mkdir(parents=True, exist_ok=True)
        if self.data_url is not None and recorded_data_url(self.root) is None:
            self.record_data_url()  # the first write: the catalog now refers to that data
        con = connect_waiting(self.warehouse_path)
        try:
            create_tables(con)
        except BaseException:
            con.close()  # rolls back a DDL run left half done
            raise
        return con

    def lance(self) -> lancedb.DBConnection:
        """The LanceDB database, local or on the object store (with the storage options of
        `stores.data_url`)."""
        import lancedb  # imported on use: the CLI's light commands never load it

        if not self.data_is_remote:
            Path(self.lance_path).mkdir(parents=True, exist_ok=True)
        return lancedb.connect(
            self.lance_path, storage_options=lance_storage_options(self.lance_path)
        )


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the declared tables, view and migrations on a writable connection, unless the
    file records that this very DDL already ran (`schemas.warehouse.DDL_DIGEST`): one
    query instead of the DDL's 23 statements. A table dropped by hand behind kgmem's back
    is therefore not created again until the declarations change."""
    import duckdb

    from schemas.warehouse import DDL, DDL_DIGEST

    try:
        recorded = con.execute("SELECT ddl_digest FROM warehouse_schema").fetchall()
    except duckdb.CatalogException:
        recorded = []
    if recorded == [(DDL_DIGEST,)]:
        return
    con.execute("BEGIN TRANSACTION")
    for statement in DDL:
        con.execute(statement)
    con.execute("DELETE FROM warehouse_schema")
    con.execute("INSERT INTO warehouse_schema VALUES (?)", [DDL_DIGEST])
    con.execute("COMMIT")


def recorded_data_url(root: Path) -> str | None:
    """The data URL the workspace at `root` recorded, if any (none where `root` is not a
    folder: there is no workspace there, which whoever opens it reports)."""
    try:
        record = json.loads((root / WORKSPACE_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{root / WORKSPACE_FILE}: unreadable ({exc})") from None
    return record.get("data_url")


def resolve_data_url(root: Path, given: str | None = None) -> str | None:
    """The data URL of the workspace at `root`: the recorded one, else `given` or
    `KGMEM_DATA_URL` (canonical; None when the data stays in the folder). A ValueError
    when the one given differs from the recorded one, or when the folder already holds
    the shared data locally."""
    recorded = recorded_data_url(root)
    source = "--data-url" if given else DATA_URL_ENV
    wanted = given or os.environ.get(DATA_URL_ENV) or None
    if wanted is None:
        return recorded
    wanted = normalize(wanted)
    if wanted == str(root):
        wanted = None
    if recorded is not None:
        if wanted is not None and wanted != recorded:
            raise ValueError(
                f"workspace {root} keeps its data at {recorded}, but {source} says {wanted}; "
                "use another --home for other data"
            )
        return recorded
    local = [name for name in SHARED_FOLDERS if (root / name).exists()]
    if wanted is not None and local:
        raise ValueError(
            f"workspace {root} already keeps its data in its folder ({local[0]}/), so "
            f"{source} {wanted} cannot apply to it; use a new --home for data at that URL"
        )
    return wanted


def lance_table_name(collection: str, kind: str) -> str:
    """Name of the LanceDB table holding `kind` rows ("segments", "entities") of a collection."""
    return f"{check_collection_name(collection)}__{kind}"
