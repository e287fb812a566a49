"""A writable connection creates the declared warehouse tables once per file: the DDL runs
on a new file and after the declarations change, and is skipped while the file records
the current `DDL_DIGEST`."""

from __future__ import annotations

from pathlib import Path

import duckdb

from schemas.warehouse import DDL_DIGEST, TABLES
from stores.workspace import Workspace


def _views(con: duckdb.DuckDBPyConnection) -> list[str]:
    found = con.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    return [row[0] for row in found]


def test_the_ddl_runs_on_a_new_file_and_again_only_when_the_declarations_change(
    tmp_path: Path,
) -> None:
    workspace = Workspace.at(tmp_path)
    with workspace.connect() as con:
        tables = {r[0] for r in con.sql("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert tables == {t.name for t in TABLES}
        assert con.execute("SELECT ddl_digest FROM warehouse_schema").fetchall() == [(DDL_DIGEST,)]
        con.execute("DROP VIEW fact_versions")
    with workspace.connect() as con:  # the digest is current: no DDL ran
        assert _views(con) == []
        con.execute("UPDATE warehouse_schema SET ddl_digest = 'older declarations'")
    with workspace.connect() as con:
        assert _views(con) == ["fact_versions"]
        assert con.execute("SELECT ddl_digest FROM warehouse_schema").fetchall() == [(DDL_DIGEST,)]
    with workspace.connect(read_only=True) as con:
        assert _views(con) == ["fact_versions"]
