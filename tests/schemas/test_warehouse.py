"""Each table is declared once: the DDL made from the declaration creates exactly the
Arrow schema's columns and types, and the contract suites name the same columns."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from data_contracts.suites import SUITES
from schemas.ddl import TableDecl, duckdb_type
from schemas.embedding_cache import EMBEDDING_CACHE_TABLE
from schemas.llm_outputs import LLM_CACHE_TABLE
from schemas.tables import FACT_VERSION_COLUMNS, SEGMENTS
from schemas.warehouse import DDL, TABLES

EVERY_TABLE = [*TABLES, LLM_CACHE_TABLE, EMBEDDING_CACHE_TABLE]


@pytest.mark.parametrize("table", EVERY_TABLE, ids=lambda t: t.name)
def test_the_ddl_holds_the_arrow_schema(table: TableDecl):
    with duckdb.connect() as con:
        con.execute(table.ddl())
        con.register("incoming", table.schema.empty_table())
        con.execute(f"INSERT INTO {table.name} BY NAME SELECT * FROM incoming")
        back = con.sql(f"SELECT * FROM {table.name}").to_arrow_table()
        key = con.execute(
            "SELECT constraint_column_names FROM duckdb_constraints() "
            "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
            [table.name],
        ).fetchall()
    assert back.schema.names == table.schema.names
    assert [duckdb_type(f.type) for f in back.schema] == [duckdb_type(f.type) for f in table.schema]
    assert [tuple(k[0]) for k in key] == ([table.key] if table.key else [])


def test_the_warehouse_ddl_runs_twice_and_the_view_has_the_declared_columns():
    with duckdb.connect() as con:
        for _ in range(2):  # every open of a workspace runs it
            for statement in DDL:
                con.execute(statement)
        view = con.sql("SELECT * FROM fact_versions").to_arrow_table()
    assert tuple(view.schema.names) == FACT_VERSION_COLUMNS


def test_contract_suites_name_the_declared_columns():
    def expected_columns(suite) -> list[str]:
        return [e.column for e in suite.expectations if type(e).__name__ == "ExpectColumnToExist"]

    assert expected_columns(SUITES["segments"]()) == SEGMENTS.names
    assert expected_columns(SUITES["fact_versions"]()) == list(FACT_VERSION_COLUMNS)


def test_a_declaration_naming_an_unknown_column_or_type_is_refused():
    with pytest.raises(ValueError, match="no column"):
        TableDecl("t", pa.schema([("a", pa.string())]), ("b",))
    with pytest.raises(TypeError, match="no DuckDB column type"):
        duckdb_type(pa.dictionary(pa.int8(), pa.string()))
