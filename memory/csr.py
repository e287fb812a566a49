"""Rows of a CSR matrix read straight from its arrays: a search that reads the rows of a
few nodes per step (the passage walk's push rounds, GRAM's path levels) would otherwise
pay scipy's fancy indexing, which validates the request and builds a new matrix each time
(~0.14 ms a call idle, 0.5 ms on a loaded machine, against a few microseconds here).

`add_rows`, the passage walk's push step, runs the two C loops that scipy's own row
indexing and CSC matrix-vector product run (`scipy.sparse._sparsetools`, private to scipy,
whose version the project pins), instead of numpy passes."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import _sparsetools


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenated ranges starts[i] … starts[i] + counts[i] - 1 (int64), as the
    running sum of their steps: 1 within a range, and from the last value of one
    non-empty range to the first of the next, the jump between them (two passes over the
    result, against five for the sum of repeated starts, offsets and a count)."""
    kept = counts > 0
    starts = starts[kept].astype(np.int64)
    counts = counts[kept].astype(np.int64)
    if not len(counts):
        return np.zeros(0, np.int64)
    ends = np.cumsum(counts)
    steps = np.ones(int(ends[-1]), np.int64)
    steps[0] = starts[0]
    steps[ends[:-1]] = starts[1:] - (starts[:-1] + counts[:-1] - 1)
    return np.cumsum(steps)


def row_entries(
    matrix: sp.csr_matrix, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(column indices, values, entries per row) of `rows` of `matrix`, rows in the order
    given and each row's entries in stored order: exactly `matrix[rows]`'s indices, data
    and row lengths."""
    first = matrix.indptr[rows]
    counts = matrix.indptr[rows + 1] - first
    entries = ranges(first, counts)
    return matrix.indices[entries], matrix.data[entries], counts


def add_rows(
    matrix: sp.csr_matrix, rows: np.ndarray, scale: np.ndarray, into: np.ndarray
) -> np.ndarray:
    """Add `scale[i]` times row `rows[i]` of `matrix` into the vector `into`, in place, and
    return the column indices of the entries added (`row_entries`' columns).

    Exactly `np.add.at(into, columns, values * np.repeat(scale, counts))` of
    `row_entries(matrix, rows)`, bit for bit: each product is rounded once and added to
    `into` in the same order (rows in the order given, each row's entries in stored
    order), since the gathered rows are the columns of a CSC matrix whose product with
    `scale` scipy accumulates entry by entry into `into`. Two C passes over the entries
    (gather, then multiply-add) where the numpy form made about ten (ranges, two gathers,
    a repeat, a product and `add.at`): at 1M facts the walk's push fell from ~7 to ~4.5
    ms a query."""
    index = matrix.indptr.dtype  # scipy keeps indptr and indices in one dtype
    rows = np.asarray(rows, index)  # another dtype would make scipy convert the matrix
    first = matrix.indptr[rows]
    offsets = np.zeros(len(rows) + 1, index)
    np.cumsum(matrix.indptr[rows + 1] - first, out=offsets[1:])
    columns = np.empty(int(offsets[-1]), index)
    values = np.empty(len(columns), matrix.data.dtype)
    _sparsetools.csr_row_index(
        len(rows), rows, matrix.indptr, matrix.indices, matrix.data, columns, values
    )
    scale = np.asarray(scale, matrix.data.dtype)
    _sparsetools.csc_matvec(len(into), len(rows), offsets, columns, values, scale, into)
    return columns
