"""Rows of the memory-mapped matrices of a graph index read with bounded resident memory:
contiguous spans multiplied through the mapping and handed back at once
(`span_products`), scattered rows gathered through the mapping, whose pages are handed
back once the rows gathered since the last hand-back have mapped `RESIDENT_BUDGET` bytes
(`read_rows`).

A graph index maps its vector matrices (`np.load(..., mmap_mode="r")`: 1.5 GB of statement
vectors at 1M facts, their IVF copy as much again, 384 MB of entity vectors). Every row
touched through a mapping maps the kernel's fault-around window (64 KB, 16 pages) into the
process, and the pages stay mapped: measured on the 1M-fact benchmark, 5,000 random
statement rows made 320 MB resident, with or without `MADV_RANDOM` (which stops the
read-ahead from disk, not the fault-around); twelve REAL queries left 1.2 GB of the
statement matrix resident, MemORAI's 0.9 GB of it and of its IVF lists, and both
strategies peaked above 2.9 GB in 20 queries.

- An IVF probe reads whole lists (1.5 MB each at 1M facts, new ones at every query):
  `span_products` multiplies each list in place through the mapping and hands its pages
  back (`MADV_DONTNEED`, with the fault-around windows at its edges) before the next, so
  a probe's 50 MB are never resident together. Measured at 1M facts (32 lists, warm page
  cache, one core): 10 ms a probe against 17 ms when each list was first copied out of
  the file (`os.preadv`, as the probe did before), with a lower peak.
- Scattered rows are gathered through the mapping: REAL reads ~15k statement rows a query
  in ~7k runs, and a read per run from Python took 3.4 times as long as the mapped gather
  (which maps 64 KB per fault and reuses what earlier queries mapped). `read_rows` counts
  the 64 KB windows its gathers touched per mapping; once they exceed `RESIDENT_BUDGET` in
  all, every mapping it read is handed back (`MADV_DONTNEED`: the pages leave the
  resident set and stay in the page cache; a later gather maps them again).

The values are the file's bytes either way, so results are identical. A matrix that is no
row-contiguous view of a file mapping (an array computed in memory) is indexed as usual.
"""

from __future__ import annotations

import mmap
import threading
import weakref

import numpy as np

WINDOW = 1 << 16
"""Bytes the kernel maps around a faulting page of a file mapping (its default
`fault_around_bytes`): what touching a row maps, counted per aligned window of the file
(an estimate: the kernel aligns windows in memory, and a row may straddle two)."""
RESIDENT_BUDGET = 768 << 20
"""Bytes of windows `read_rows` may have touched, over all mappings, before it hands them
back. REAL maps ~100 MB of new statement rows a query at 1M facts and reads many of them
again in later queries, so a smaller budget hands back (~0.1 ms per MB, measured 17 ms for
190 MB) and faults again more often. Measured at 1M facts, 20 queries: peaks of 2.5 GB
(REAL) and 2.4 GB (MemORAI) against 3.1 and 2.9 GB before, REAL's p50 within the noise of
before's; a 1 GiB budget put REAL at 2.8 GB, the issue's ceiling (2.7 GB)."""

_TOUCHED = "_mapped_rows_touched"
_LOCK = threading.Lock()
_GATHERED: dict[int, weakref.ref[np.memmap]] = {}
"""The mappings `read_rows` gathered from, by id (arrays are not hashable)."""
_touched_windows = 0


def _root(matrix: np.ndarray) -> np.memmap | None:
    """The `np.memmap` (made by `np.memmap` / `np.load(mmap_mode=...)`) whose file mapping
    `matrix` views, or None for an array in memory."""
    root = matrix
    while isinstance(root, np.ndarray) and not (
        isinstance(root, np.memmap) and isinstance(root.base, mmap.mmap)
    ):
        root = root.base
    return root if isinstance(root, np.memmap) and root.filename is not None else None


def _mapped(matrix: np.ndarray) -> tuple[np.memmap, int] | None:
    """(root mapping, byte offset of the matrix's first row within the mapped file) of a
    row-contiguous array that views a file mapping; None for any other array."""
    if not isinstance(matrix, np.ndarray) or not matrix.flags.c_contiguous or matrix.ndim == 0:
        return None
    root = _root(matrix)
    if root is None:
        return None
    return root, int(root.offset) + (matrix.ctypes.data - root.ctypes.data)


def read_rows(matrix: np.ndarray, rows: np.ndarray | list[int]) -> np.ndarray:
    """`matrix[rows]` as a new array (rows in the order and with the repeats asked for),
    gathered through the mapping; when `matrix` views one, the windows the rows lie in are
    counted against `RESIDENT_BUDGET`, and the mappings gathered from are handed back once
    it is spent."""
    rows = np.asarray(rows, np.int64).reshape(-1)
    gathered = np.asarray(matrix[rows])
    located = _mapped(matrix) if len(rows) else None
    if located is not None:
        root, first = located
        rows = np.where(rows < 0, rows + len(matrix), rows)
        start = first + rows * matrix.strides[0]
        windows = np.concatenate([start // WINDOW, (start + matrix.strides[0] - 1) // WINDOW])
        _count(root, windows)
    return gathered


MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)
"""Linux's `madvise` advice (5.14+) that maps every page of a range now, as reads would;
Python names it from 3.12 on."""


def populate(matrix: np.ndarray) -> bool:
    """Map every page of the file mapping `matrix` views now, in one system call (no copy,
    values unchanged): for a bounded matrix that a reader gathers scattered rows of and
    leaves mapped, so its queries do not each fault rows in one by one. Whether it did
    (False for an array in memory, or where the kernel has no such advice)."""
    located = _mapped(matrix)
    if located is None or not matrix.size:
        return False
    root = located[0]
    try:
        root._mmap.madvise(MADV_POPULATE_READ)  # type: ignore[attr-defined]
    except (OSError, ValueError):
        return False
    return True


def span_products(
    matrix: np.ndarray, starts: np.ndarray, ends: np.ndarray, vector: np.ndarray
) -> np.ndarray:
    """`matrix[starts[i]:ends[i]] @ vector` (float32) for every i, concatenated: when
    `matrix` views a mapping, each span is multiplied in place through it and its pages
    are handed back (`MADV_DONTNEED`) right after, so a probe leaves nothing resident and
    spends nothing of `RESIDENT_BUDGET`. Spans are within bounds."""
    starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    located = _mapped(matrix)
    products = [np.zeros(0, np.float32)]
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        if end > start:
            products.append(np.asarray(matrix[start:end] @ vector, np.float32))
            if located is not None:
                _hand_back(*located, start * matrix.strides[0], end * matrix.strides[0])
    return np.concatenate(products)


def _hand_back(root: np.memmap, first: int, begin: int, end: int) -> None:
    """Hand back the pages of bytes [begin, end) of the matrix whose first row is at file
    byte `first` of `root`'s mapping, widened by a fault-around `WINDOW` each side (the
    kernel mapped the neighbours' pages with the span's edges) to whole windows: pages of
    rows outside the span are mapped again when next touched."""
    # np.memmap maps the file from its offset rounded down to the allocation granularity
    mapped_from = int(root.offset) - int(root.offset) % mmap.ALLOCATIONGRANULARITY
    low = max(first + begin - mapped_from - WINDOW, 0)
    high = first + end - mapped_from + WINDOW
    low -= low % WINDOW
    high = min(high + (-high) % WINDOW, len(root._mmap))  # type: ignore[attr-defined]
    root._mmap.madvise(mmap.MADV_DONTNEED, low, high - low)  # type: ignore[attr-defined]


def _count(root: np.memmap, windows: np.ndarray) -> None:
    """Mark the file windows a gather touched; hand every gathered mapping back once the
    marked windows exceed the budget."""
    global _touched_windows
    with _LOCK:
        touched = root.__dict__.get(_TOUCHED)
        if touched is None:
            size = int(root.offset) + root.nbytes
            touched = np.zeros(size // WINDOW + 1, bool)
            setattr(root, _TOUCHED, touched)
            key = id(root)
            _GATHERED[key] = weakref.ref(root, lambda _, key=key: _GATHERED.pop(key, None))
        fresh = np.unique(windows[~touched[windows]])
        touched[fresh] = True
        _touched_windows += len(fresh)
        if _touched_windows * WINDOW > RESIDENT_BUDGET:
            for reference in list(_GATHERED.values()):
                mapping = reference()
                if mapping is not None:
                    mapping._mmap.madvise(mmap.MADV_DONTNEED)  # type: ignore[attr-defined]
                    mapping.__dict__[_TOUCHED][:] = False
            _touched_windows = 0
