"""A query's facts as a selection of the graph index's columns: positions into the mapped
fact table and vector matrix, and nothing copied per fact.

A strategy reads a fact as a row (`facts[i]["relation"]`), but only the fields of the rows
it touches are ever turned into Python values; the selection of a million facts is one
int64 array.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, overload
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from transforms.cpu_lanes import lane_product
from transforms.mapped_rows import read_rows, read_rows_from_file

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
Field = Callable[[int], Any]
"""Reads one field of the fact at a position."""
DICTIONARY_LIMIT = 4_096
"""A string column with at most this many distinct values is read through its codes."""


class FactColumns:
    """Fast field readers over the index's fact table: a numeric or boolean column is read
    from its NumPy view, a string column with few distinct values (relation, cardinality,
    extractor, operation) through its integer codes, any other column with a time zone
    through its microseconds, and any other column (names, ids, lists) as an Arrow scalar.

    A column's reader is made when the column is first read, from its one mapped chunk
    without a copy: making all 18 readers at once took 1.2-1.9 s of a 1M-fact snapshot's
    first query (copying the 230 MB table and dictionary-encoding its id and name columns
    only to find them unique), and a query reads a handful of columns."""

    def __init__(self, table: pa.Table) -> None:
        self.names = list(table.column_names)
        self._table = table
        self._fields: dict[str, Field] = {}
        self._arrays: dict[tuple[str, str], Any] = {}

    def read(self, name: str, position: int) -> Any:
        field = self._fields.get(name)
        if field is None:
            field = self._fields[name] = _reader(self._column(name))
        return field(position)

    def numbers(self, name: str) -> np.ndarray | None:
        """A numeric or boolean column without nulls as one NumPy array (None for any other
        column): for filters over many facts at once, read as `read` reads each."""
        return self._array(name, "numbers", _numbers)

    def codes(self, name: str) -> tuple[list[Any], np.ndarray] | None:
        """A string column as (distinct values, with None last; each row's index into
        them), None where it is no string column."""
        return self._array(name, "codes", _codes)

    def micros(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A time-zoned microsecond timestamp column as (per row, whether it has a value;
        its microseconds since the epoch, 0 where it has none), None for other columns."""
        return self._array(name, "micros", _micros)

    def _array(self, name: str, kind: str, convert: Callable[[pa.Array], Any]) -> Any:
        """`convert` of the column, computed once (a column-wide read, kept)."""
        key = (name, kind)
        if key not in self._arrays:
            self._arrays[key] = convert(self._column(name))
        return self._arrays[key]

    def _column(self, name: str) -> pa.Array:
        """The column as one array: its one mapped chunk itself (no copy), else the chunks
        combined."""
        column = self._table.column(name)
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _numbers(column: pa.Array) -> np.ndarray | None:
    kind = column.type
    numeric = pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_boolean(kind)
    return column.to_numpy(zero_copy_only=False) if numeric and column.null_count == 0 else None


def _codes(column: pa.Array) -> tuple[list[Any], np.ndarray] | None:
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return None
    encoded = column.dictionary_encode()
    names = encoded.dictionary.to_pylist()
    codes = encoded.indices.fill_null(len(names)).to_numpy(zero_copy_only=False)
    return [*names, None], np.asarray(codes, np.int64)


def _micros(column: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    kind = column.type
    if not (pa.types.is_timestamp(kind) and kind.tz and kind.unit == "us"):
        return None
    return _micro_values(column)


def _micro_values(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    return valid, pc.cast(column, pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)


def _reader(column: pa.Array) -> Field:
    kind = column.type
    if pa.types.is_timestamp(kind) and kind.tz and kind.unit == "us":
        return _timestamp_reader(column, ZoneInfo(kind.tz))
    if column.null_count == 0 and (
        pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_boolean(kind)
    ):
        values = column.to_numpy(zero_copy_only=False)
        return lambda position: values[position].item()
    if (pa.types.is_string(kind) or pa.types.is_large_string(kind)) and not _many_distinct(column):
        encoded = column.dictionary_encode()
        if len(encoded.dictionary) <= DICTIONARY_LIMIT:
            names = encoded.dictionary.to_pylist()
            codes = encoded.indices.fill_null(len(names)).to_numpy(zero_copy_only=False)
            names.append(None)
            return lambda position: names[codes[position]]
    return lambda position: column[position].as_py()


def _many_distinct(column: pa.Array) -> bool:
    """Whether a prefix of `column` already has more than `DICTIONARY_LIMIT` distinct
    values (so the whole has too): an id or name column is found unique in a few ms
    instead of encoding all of its rows."""
    prefix = column.slice(0, 8 * DICTIONARY_LIMIT)
    return len(prefix) < len(column) and len(prefix.unique()) > DICTIONARY_LIMIT


def _timestamp_reader(column: pa.Array, zone: ZoneInfo) -> Field:
    """Microsecond timestamps as aware datetimes in the column's zone (what Arrow's `as_py`
    gives, without its per-scalar cost)."""
    valid, micros = _micro_values(column)

    def read(position: int) -> datetime | None:
        if not valid[position]:
            return None
        return (EPOCH + timedelta(microseconds=int(micros[position]))).astimezone(zone)

    return read


class FactRow(Mapping[str, Any]):
    """One fact as a read-only mapping; each field is read from its column when first
    asked for, so a strategy that looks at a fact's relation and confidence never
    converts its other fields."""

    __slots__ = ("_columns", "_position", "_values")

    def __init__(self, columns: FactColumns, position: int) -> None:
        self._columns = columns
        self._position = position
        self._values: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = self._columns.read(key, self._position)
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns.names)

    def __len__(self) -> int:
        return len(self._columns.names)

    def __repr__(self) -> str:
        return f"FactRow({dict(self)!r})"


ROW_CACHE = 262_144
"""Rows a `FactRows` keeps once read (with the fields read), so a strategy that looks at
one fact several times converts each field once; emptied when full, so memory stays
bounded whatever a strategy touches."""


class FactRows(Sequence[FactRow]):
    """Rows `positions` of the fact columns, each read as a `FactRow` when asked for."""

    def __init__(self, columns: FactColumns, positions: np.ndarray) -> None:
        self._columns = columns
        self._positions = positions
        self._rows: dict[int, FactRow] = {}

    def __len__(self) -> int:
        return len(self._positions)

    @property
    def columns(self) -> FactColumns:
        return self._columns

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """Positions in the fact columns of rows `rows` of this selection (for reading many
        rows' fields at once through `FactColumns.numbers`, `codes`, `micros`)."""
        return np.asarray(self._positions[rows], np.int64)

    @overload
    def __getitem__(self, i: int) -> FactRow: ...
    @overload
    def __getitem__(self, i: slice) -> list[FactRow]: ...
    def __getitem__(self, i: int | slice) -> FactRow | list[FactRow]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        row = self._rows.get(i)
        if row is None:
            if len(self._rows) >= ROW_CACHE:
                self._rows.clear()
            row = self._rows[i] = FactRow(self._columns, int(self._positions[i]))
        return row


class SelectedRows:
    """Rows `positions` of `matrix` (which may be memory-mapped), indexed and multiplied
    without copying the whole selection."""

    def __init__(self, matrix: np.ndarray, positions: np.ndarray, bounded: bool = True) -> None:
        self._matrix = matrix
        self._positions = positions
        self._bounded = bounded
        self._whole = len(positions) == len(matrix) and bool(
            np.array_equal(positions, np.arange(len(matrix)))
        )
        self._inverse: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self._positions), self._matrix.shape[1] if self._matrix.ndim == 2 else 0)

    @property
    def positions(self) -> np.ndarray:
        """The selected rows of the whole matrix, ascending (selection position i is whole
        matrix row positions[i])."""
        return self._positions

    @property
    def whole(self) -> bool:
        """Whether the selection is every row of the matrix, in order."""
        return self._whole

    def __len__(self) -> int:
        return len(self._positions)

    def within(self, rows: np.ndarray) -> np.ndarray:
        """Selection positions of whole-matrix `rows` (-1 for a row the selection leaves
        out): a lookup in the inverse of `positions`, made on first use (4 bytes a matrix
        row). A binary search of the 32k rows an IVF probe reads in the 1M positions at
        1M facts took ~10 ms a query; the lookup takes well under 1 ms."""
        if self._inverse is None:
            inverse = np.full(len(self._matrix), -1, np.int32 if len(self) < 2**31 else np.int64)
            inverse[self._positions] = np.arange(len(self._positions), dtype=inverse.dtype)
            self._inverse = inverse
        return np.asarray(self._inverse[np.asarray(rows, np.int64)], np.int64)

    def unbounded(self) -> SelectedRows:
        """The same selection, its rows read through the mapping without handing pages
        back: for a reader that touches most rows again at every query (see
        `memory.personalai.hypergraph`)."""
        return SelectedRows(self._matrix, self._positions, bounded=False)

    def __getitem__(self, key: Any) -> np.ndarray:
        """Selected row(s) `key`, copied; a mapped matrix's rows are read with bounded
        resident memory (`transforms.mapped_rows`) unless the selection is `unbounded`."""
        rows = self._positions[key]
        if not self._bounded:
            return np.asarray(self._matrix[rows])
        if np.ndim(rows) == 0:
            return read_rows(self._matrix, [int(rows)])[0]
        return read_rows(self._matrix, rows)

    def from_file(self, rows: np.ndarray) -> np.ndarray:
        """Selected rows `rows` (positions within the selection), copied out of the file of
        a mapped matrix without touching the mapping (`mapped_rows.read_rows_from_file`):
        for rows a reader seldom reads again."""
        return read_rows_from_file(self._matrix, self._positions[np.asarray(rows, np.int64)])

    def take(self, rows: np.ndarray) -> np.ndarray:
        """Selected rows `rows` (positions within the selection), copied."""
        return self[np.asarray(rows)]

    def __matmul__(self, vector: np.ndarray) -> np.ndarray:
        """Products of the selected rows with `vector`: the product runs over the whole
        (mapped) matrix in place, in lanes (`cpu_lanes.lane_product`), and is then
        selected, which costs a few more rows than the selection but copies no row."""
        products = lane_product(self._matrix, vector)
        return products if self._whole else products[self._positions]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        rows = self._matrix if self._whole else self._matrix[self._positions]
        return np.asarray(rows, dtype=dtype)


class StackedRows:
    """Blocks of rows (arrays or `SelectedRows`) read as one matrix for products and row
    reads, never concatenated: a hypergraph's hyperedge vectors are the facts' mapped
    statement vectors, the theses' and the episodes' mapped segment vectors."""

    def __init__(self, blocks: Sequence[np.ndarray | SelectedRows]) -> None:
        self._blocks = list(blocks)
        self._ends = np.cumsum([len(b) for b in self._blocks])

    @property
    def shape(self) -> tuple[int, int]:
        widths = [b.shape[1] for b in self._blocks if len(b)]
        return (int(self._ends[-1]) if len(self._ends) else 0, widths[0] if widths else 0)

    def __len__(self) -> int:
        return self.shape[0]

    def __matmul__(self, vector: np.ndarray) -> np.ndarray:
        products = [np.asarray(b @ vector, np.float32) for b in self._blocks if len(b)]
        return np.concatenate(products) if products else np.zeros(0, np.float32)

    def row_products(self, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """float32 product of each row of `rows` (any order, repeats allowed) with
        `vector`, an `einsum` of each row alone (the same bits whatever rows come with
        it), block by block, without assembling the rows into one array first."""
        rows = np.asarray(rows, np.int64)
        products = np.empty(len(rows), np.float32)
        for at, values in self._gathered(rows):
            products[at] = np.einsum("ij,j->i", values, vector)
        return products

    def _gathered(self, rows: np.ndarray) -> Iterator[tuple[slice | np.ndarray, np.ndarray]]:
        """(where in `rows`, the rows there) block by block: ascending `rows` (what a
        hypergraph's scoring asks for) fall into each block as one run, a slice, so
        nothing is scattered through an index array."""
        starts = np.r_[0, self._ends[:-1]]
        if np.all(rows[1:] >= rows[:-1]):
            bounds = [*np.searchsorted(rows, starts).tolist(), len(rows)]
            for b, (low, high) in enumerate(itertools.pairwise(bounds)):
                if high > low:
                    yield slice(low, high), self._read(b, rows[low:high] - starts[b])
            return
        block = np.searchsorted(self._ends, rows, side="right")
        for b in np.unique(block).tolist():
            at = np.flatnonzero(block == b)
            yield at, self._read(b, rows[at] - starts[b])

    def _read(self, block: int, local: np.ndarray) -> np.ndarray:
        part = self._blocks[block]
        return part.take(local) if isinstance(part, SelectedRows) else part[local]

    def __getitem__(self, row: int) -> np.ndarray:
        block = int(np.searchsorted(self._ends, row, side="right"))
        start = int(self._ends[block - 1]) if block else 0
        return np.asarray(self._blocks[block][row - start])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.concatenate([np.asarray(b, np.float32) for b in self._blocks if len(b)])
