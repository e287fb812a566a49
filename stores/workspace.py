"""Where a kgmem workspace keeps its stores, and how to open them.

A workspace is one folder: `warehouse.duckdb` (documents, segments, mentions, facts,
quarantine, snapshots), `lance/` (embedding tables), `parquet/` (Beam stage exchange)
and `dagster/` (the Dagster instance used by the CLI and the UI). The folder comes from
`KGMEM_HOME`, else `./kgmem_home`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from transforms.workspace_home import DEFAULT_HOME, HOME_ENV, default_home

if TYPE_CHECKING:
    import duckdb
    import lancedb

__all__ = [
    "DEFAULT_HOME",
    "HOME_ENV",
    "Workspace",
    "check_collection_name",
    "default_home",
    "lance_table_name",
]

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
    def embedding_cache_path(self) -> Path:
        """Vectors by (encoder, role, text hash), shared by every collection and build."""
        return self.root / "cache" / "embeddings.duckdb"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster"

    def rgcn_model_path(self, collection: str) -> Path:
        """The collection's last R-GCN weights, for a warm start (`stores.structure_table`)."""
        return self.root / "models" / "rgcn" / f"{check_collection_name(collection)}.npz"

    def parquet_dir(self, collection: str, stage: str) -> Path:
        return self.root / "parquet" / check_collection_name(collection) / stage

    def connect(self, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        """Open the warehouse (waiting while another process writes it); a writable
        connection creates missing tables first. DuckDB and the table declarations are
        imported on use, so that `kgmem --help` and argument errors load neither."""
        from schemas.warehouse import DDL
        from transforms.duckdb_connect import connect_waiting

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
        import lancedb  # imported on use: the CLI's light commands never load it

        self.lance_path.mkdir(parents=True, exist_ok=True)
        return lancedb.connect(str(self.lance_path))


def lance_table_name(collection: str, kind: str) -> str:
    """Name of the LanceDB table holding `kind` rows ("segments", "entities") of a collection."""
    return f"{check_collection_name(collection)}__{kind}"
