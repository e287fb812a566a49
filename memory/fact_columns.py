"""A query's facts as a selection of the graph index's columns: positions into the mapped
fact table and vector matrix, and nothing copied per fact.

A strategy reads a fact as a row (`facts[i]["relation"]`), but only the rows it touches
are ever turned into Python values; the selection of a million facts is one int64 array.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

CHUNK_ROWS = 65_536
"""Rows per block when a product runs over a selection of a mapped matrix (a block is
copied, the whole selection never is)."""


class FactRows:
    """Rows `positions` of `table`, each read as a dict when asked for."""

    def __init__(self, table: pa.Table, positions: np.ndarray) -> None:
        self._table = table
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, i: int) -> dict[str, Any]:
        position = int(self._positions[i])
        return {
            name: self._table.column(name)[position].as_py() for name in self._table.column_names
        }

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[i] for i in range(len(self)))


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
