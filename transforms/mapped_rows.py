"""Rows of a memory-mapped matrix read from its file (`os.preadv`) instead of through the
mapping, so that the pages read do not become the process's resident memory.

A graph index maps its vector matrices (`np.load(..., mmap_mode="r")`: 1.5 GB of statement
vectors at 1M facts, their IVF copy as much again, 384 MB of entity vectors). A query
reads a few thousand scattered rows of them, and every row touched through the mapping
maps the kernel's fault-around window (64 KB, 16 pages) into the process: measured on the
1M-fact benchmark, 5,000 random statement rows made 320 MB resident, with or without
`MADV_RANDOM` (which stops the read-ahead from disk, not the fault-around), and twelve
REAL queries left 1.2 GB of the statement matrix resident, MemORAI's 0.9 GB of it and
of its IVF lists. A read copies only the rows asked for; the file's pages stay in the
page cache, shared and not counted in the process's resident set. The values are the
bytes of the file either way, so results are identical.

It is also the faster way to a row not read before: on the shared 2-core machine a
gather of 3,000 random statement rows through the mapping took 33 ms (a fault per row,
~11 µs each), a read ~6 µs a row from Python. Rows are read as runs of consecutive
positions (one system call per run), so a contiguous IVF list is one read; the file is
opened once per mapping (its descriptor lives as long as the mapping). A gather of more
than `MAX_RUNS` runs, or a matrix that is no row-contiguous view of a file mapping (an
array computed in memory), is indexed as before.
"""

from __future__ import annotations

import mmap
import os
import weakref

import numpy as np

MAX_RUNS = 65_536
"""Above this many separate runs a gather goes through the mapping (bounds the time one
gather spends in system calls from Python)."""
_DESCRIPTOR = "_mapped_rows_descriptor"


def _root(matrix: np.ndarray) -> np.memmap | None:
    """The `np.memmap` (made by `np.memmap` / `np.load(mmap_mode=...)`) whose file mapping
    `matrix` views, or None for an array in memory."""
    root = matrix
    while isinstance(root, np.ndarray) and not (
        isinstance(root, np.memmap) and isinstance(root.base, mmap.mmap)
    ):
        root = root.base
    return root if isinstance(root, np.memmap) and root.filename is not None else None


def file_position(matrix: np.ndarray) -> tuple[int, int] | None:
    """(open descriptor of the file, byte offset of the first row) of a row-contiguous
    array that views a file mapping; None for any other array."""
    if not isinstance(matrix, np.ndarray) or not matrix.flags.c_contiguous or matrix.ndim == 0:
        return None
    root = _root(matrix)
    if root is None:
        return None
    return _descriptor(root), int(root.offset) + (matrix.ctypes.data - root.ctypes.data)


def _descriptor(root: np.memmap) -> int:
    """A read descriptor of the mapping's file, opened once and closed with the mapping."""
    descriptor = root.__dict__.get(_DESCRIPTOR)
    if descriptor is None:
        descriptor = os.open(root.filename, os.O_RDONLY)
        setattr(root, _DESCRIPTOR, descriptor)
        weakref.finalize(root, os.close, descriptor)
    return descriptor


def read_rows(matrix: np.ndarray, rows: np.ndarray | list[int]) -> np.ndarray:
    """`matrix[rows]` as a new array (rows in the order and with the repeats asked for),
    read from the mapped file when `matrix` views one (`file_position`)."""
    rows = np.asarray(rows, np.int64).reshape(-1)
    located = file_position(matrix) if len(rows) else None
    if located is None:
        return np.asarray(matrix[rows])
    rows = np.where(rows < 0, rows + len(matrix), rows)
    if rows.min() < 0 or rows.max() >= len(matrix):
        raise IndexError(f"rows out of range for a matrix of {len(matrix)} rows")
    if len(rows) == 1:  # the common single row, without the runs' bookkeeping
        return _read_spans(matrix, located, rows, rows + 1)
    wanted, inverse = np.unique(rows, return_inverse=True)
    breaks = np.flatnonzero(np.diff(wanted) != 1) + 1
    if len(breaks) + 1 > MAX_RUNS:
        return np.asarray(matrix[rows])
    starts, ends = wanted[np.r_[0, breaks]], wanted[np.r_[breaks, len(wanted)] - 1] + 1
    read = _read_spans(matrix, located, starts, ends)
    return read if np.array_equal(wanted, rows) else read[inverse]


def read_spans(matrix: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """`matrix[starts[i]:ends[i]]` for every i, concatenated into one new array, read from
    the mapped file when `matrix` views one (`file_position`). Spans are within bounds."""
    starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    located = file_position(matrix)
    if located is None:
        empty = np.zeros((0, *matrix.shape[1:]), matrix.dtype)
        return np.concatenate([empty, *(matrix[s:e] for s, e in zip(starts, ends, strict=True))])
    return _read_spans(matrix, located, starts, ends)


def _read_spans(
    matrix: np.ndarray, located: tuple[int, int], starts: np.ndarray, ends: np.ndarray
) -> np.ndarray:
    """The spans' rows read from the file at `located`, one system call per span."""
    descriptor, first_row = located
    row_bytes = matrix.strides[0] if matrix.ndim > 1 else matrix.itemsize
    counts = np.maximum(ends - starts, 0)
    read = np.empty((int(counts.sum()), *matrix.shape[1:]), matrix.dtype)
    at = np.r_[0, np.cumsum(counts)].tolist()
    for i, start in enumerate(starts.tolist()):
        if at[i + 1] > at[i]:
            _read_into(descriptor, read[at[i] : at[i + 1]], first_row + start * row_bytes)
    return read


def _read_into(descriptor: int, target: np.ndarray, offset: int) -> None:
    """Fill the contiguous array `target` with the file's bytes from `offset`."""
    view = memoryview(target).cast("B")
    done = 0
    while done < len(view):
        count = os.preadv(descriptor, [view[done:]], offset + done)
        if count <= 0:
            raise OSError(f"short read at byte {offset + done}")
        done += count
