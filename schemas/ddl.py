"""A table declared once: its Arrow schema, its key and its required columns, from which
the DuckDB DDL is generated (`TableDecl.ddl`), so a column is named and typed in one place.

Arrow to DuckDB: string VARCHAR, int32 INTEGER, int64 BIGINT, float32 FLOAT, float64
DOUBLE, bool BOOLEAN, timestamp with a zone TIMESTAMPTZ (without: TIMESTAMP), list T[],
struct STRUCT(name type, ...). Key columns are NOT NULL by DuckDB's rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa


@dataclass(frozen=True)
class TableDecl:
    """One DuckDB table: name, Arrow schema (column order is the table's), key, and the
    non-key columns that must not be null."""

    name: str
    schema: pa.Schema
    key: tuple[str, ...] = ()
    required: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = sorted((set(self.key) | set(self.required)) - set(self.schema.names))
        if unknown:
            raise ValueError(f"table {self.name}: no column(s) {', '.join(unknown)}")

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.schema.names)

    def ddl(self) -> str:
        """`CREATE TABLE IF NOT EXISTS` for the table."""
        lines = [
            f"{f.name} {duckdb_type(f.type)}{' NOT NULL' if f.name in self.required else ''}"
            for f in self.schema
        ]
        if self.key:
            lines.append(f"PRIMARY KEY ({', '.join(self.key)})")
        body = ",\n    ".join(lines)
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n    {body}\n)"


_SIMPLE = (
    (pa.types.is_string, "VARCHAR"),
    (pa.types.is_int32, "INTEGER"),
    (pa.types.is_int64, "BIGINT"),
    (pa.types.is_float32, "FLOAT"),
    (pa.types.is_float64, "DOUBLE"),
    (pa.types.is_boolean, "BOOLEAN"),
)


def duckdb_type(arrow: pa.DataType) -> str:
    """The DuckDB column type of an Arrow type (see the module doc for the mapping)."""
    for matches, name in _SIMPLE:
        if matches(arrow):
            return name
    if pa.types.is_timestamp(arrow):
        return "TIMESTAMPTZ" if arrow.tz else "TIMESTAMP"
    if pa.types.is_list(arrow):
        return f"{duckdb_type(arrow.value_type)}[]"
    if pa.types.is_struct(arrow):
        fields = ", ".join(f"{f.name} {duckdb_type(f.type)}" for f in arrow)
        return f"STRUCT({fields})"
    raise TypeError(f"no DuckDB column type for Arrow {arrow}")


def struct_sql(struct: pa.StructType, alias: str, shifted: dict[str, str] | None = None) -> str:
    """A DuckDB struct literal with `struct`'s fields, taken from the columns of the same
    names of `alias` (`{'text': m.text, ...}`); `shifted` gives a field its own expression.
    Built from the declared type, so a field added there reaches every query."""
    chosen = shifted or {}
    fields = ", ".join(f"'{f.name}': {chosen.get(f.name, f'{alias}.{f.name}')}" for f in struct)
    return "{" + fields + "}"
