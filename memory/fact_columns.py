"""A query's facts as a selection of the graph index's columns: positions into the mapped
fact table and vector matrix, and nothing copied per fact.

A strategy reads a fact as a row (`facts[i]["relation"]`), but only the fields of the rows
it touches are ever turned into Python values; the selection of a million facts is one
int64 array.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
import pyarrow as pa

CHUNK_ROWS = 65_536
"""Rows per block when a product runs over a selection of a mapped matrix (a block is
copied, the whole selection never is)."""


class FactRow(Mapping[str, Any]):
    """One fact as a read-only mapping; each field is read from its column when first
    asked for (about a microsecond; a timestamp several), so a strategy that looks at a
    fact's relation and confidence never converts its other fields."""

    __slots__ = ("_columns", "_position", "_values")

    def __init__(self, columns: dict[str, pa.Array], position: int) -> None:
        self._columns = columns
        self._position = position
        self._values: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = self._columns[key][self._position].as_py()
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        return f"FactRow({dict(self)!r})"


class FactRows(Sequence[FactRow]):
    """Rows `positions` of `table`, each read as a `FactRow` when asked for."""

    def __init__(self, table: pa.Table, positions: np.ndarray) -> None:
        self._columns = {name: table.column(name).combine_chunks() for name in table.column_names}
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, i: int) -> FactRow: ...
    @overload
    def __getitem__(self, i: slice) -> list[FactRow]: ...
    def __getitem__(self, i: int | slice) -> FactRow | list[FactRow]:
        if isinstance(i, slice):
            return [FactRow(self._columns, int(p)) for p in self._positions[i]]
        return FactRow(self._columns, int(self._positions[i]))


class SelectedRows:
    """Rows `positions` of `matrix` (which may be memory-mapped), indexed and multiplied
    without copying the whole selection."""

    def __init__(self, matrix: np.ndarray, positions: np.ndarray) -> None:
        self._matrix = matrix
        self._positions = positions
        self._whole = len(positions) == len(matrix) and bool(
            np.array_equal(positions, np.arange(len(matrix)))
        )

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self._positions), self._matrix.shape[1] if self._matrix.ndim == 2 else 0)

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, key: Any) -> np.ndarray:
        return np.asarray(self._matrix[self._positions[key]])

    def __matmul__(self, vector: np.ndarray) -> np.ndarray:
        if self._whole:
            return np.asarray(self._matrix @ vector)
        blocks = [
            self._matrix[self._positions[start : start + CHUNK_ROWS]] @ vector
            for start in range(0, len(self._positions), CHUNK_ROWS)
        ]
        return np.concatenate(blocks) if blocks else np.zeros(0, np.float32)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        rows = self._matrix if self._whole else self._matrix[self._positions]
        return np.asarray(rows, dtype=dtype)
