"""Rows of the memory-mapped matrices of a graph index read with bounded resident memory:
contiguous spans copied out of the file into a reused buffer and multiplied there
(`span_products`), scattered rows either gathered through the mapping, whose pages are
handed back once the rows gathered since the last hand-back have mapped
`RESIDENT_BUDGET` bytes (`read_rows`), or copied out of the file without touching the
mapping (`read_rows_from_file`).

A graph index maps its vector matrices (`np.load(..., mmap_mode="r")`: 1.5 GB of statement
vectors at 1M facts, their IVF copy as much again, 384 MB of entity vectors). Every row
touched through a mapping maps the kernel's fault-around window (64 KB, 16 pages) into the
process, and the pages stay mapped: measured on the 1M-fact benchmark, 5,000 random
statement rows made 320 MB resident, with or without `MADV_RANDOM` (which stops the
read-ahead from disk, not the fault-around); twelve REAL queries left 1.2 GB of the
statement matrix resident, MemORAI's 0.9 GB of it and of its IVF lists, and both
strategies peaked above 2.9 GB in 20 queries.

- An IVF probe reads whole lists (1.5 MB each at 1M facts, new ones at every query):
  `span_products` copies each list with one positioned read (`os.preadv`) into a buffer
  of its thread that is reused from list to list and query to query, and multiplies it
  there; nothing of the file is mapped, so nothing is handed back. Measured at 1M facts
  (32 lists, warm page cache, one core): 6.6-8 ms a probe of the statement lists against
  10-16 ms when each list was multiplied through the mapping and its pages handed back
  (`MADV_DONTNEED`: the faults and the hand-back cost more than the copy), and 3.5 against
  5.5-6 ms over the 250k entity lists. A read into a new array per list (as the probe did
  first) took 17 ms: the fresh pages of each new array fault as the mapping's do.
- Scattered rows: REAL reads ~15k statement rows a query in ~7k runs, and reads many of
  them again in later queries, so `read_rows` gathers them through the mapping (a read per
  run from Python took 3.4 times as long as the mapped gather, which maps 64 KB per fault
  and reuses what earlier queries mapped). It counts the 64 KB windows its gathers touched
  per mapping; once they exceed `RESIDENT_BUDGET` in all, every mapping it read is handed
  back (`MADV_DONTNEED`: the pages leave the resident set and stay in the page cache; a
  later gather maps them again).
- Rows that a reader seldom reads again (MemORAI's subgraph nodes, GRAM's path facts: new
  hub neighbourhoods at every query) are copied out of the file, one positioned read per
  run of consecutive rows (`read_rows_from_file`): measured at 1M facts on statement rows
  not mapped yet, 1.0 / 7.9 / 26 ms for 300 / 3,000 / 9,000 random rows against 1.9 / 16
  / 40 ms for the gather through the mapping, which besides spends 64 KB of
  `RESIDENT_BUDGET` per row (9,000 rows: 576 MB, most of a hand-back, ~0.1 ms per MB).

The values are the file's bytes either way, so results are identical. A graph index's
files are never rewritten once published (`stores.graph_index`: a complete index is kept),
so the file opened by name holds the mapped bytes; `_file` still checks its size and its
first and last pages against the mapping, and reads through the mapping where the file is
gone or differs. A matrix that is no row-contiguous view of a file mapping (an array
computed in memory) is indexed as usual.
"""

from __future__ import annotations

import mmap
import os
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
_FILE = "_mapped_rows_file"
_PAGE = 4096
_PREADV = hasattr(os, "preadv")
_BUFFERS = threading.local()
"""Each thread's reused buffer of `span_products` (its `array` attribute)."""
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
    matrix: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    vector: np.ndarray,
    each_row: bool = False,
) -> np.ndarray:
    """`matrix[starts[i]:ends[i]] @ vector` (float32) for every i, concatenated: when
    `matrix` views a mapping, each span is read from the file into this thread's reused
    buffer and multiplied there, so a probe maps nothing and spends nothing of
    `RESIDENT_BUDGET` (where the file cannot be read, `_file`, each span is multiplied
    through the mapping and its pages handed back right after). Spans are within bounds.

    `each_row`: each row's product is an `einsum` of that row alone, the same bits
    whatever span or batch the row comes in (a BLAS product of a block may differ from a
    row's in the last bit), for a reader that also scores some of these rows one by one
    (`memory.personalai.hypergraph.EdgeSimilarity`)."""
    starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    located = _mapped(matrix)
    descriptor = _file(located[0]) if located is not None else None
    products = [np.zeros(0, np.float32)]
    row_bytes = matrix.strides[0]
    widest = int(np.max(ends - starts, initial=0)) * row_bytes
    buffer = _buffer(widest) if descriptor is not None else None

    def product(rows: np.ndarray) -> np.ndarray:
        return np.asarray(np.einsum("ij,j->i", rows, vector) if each_row else rows @ vector)

    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        if end <= start:
            continue
        if located is None or buffer is None:
            products.append(np.asarray(product(matrix[start:end]), np.float32))
            if located is not None:
                _hand_back(*located, start * row_bytes, end * row_bytes)
        else:
            into = buffer[: (end - start) * row_bytes]
            _read_into(located[0], located[1] + start * row_bytes, into)
            rows = into.view(matrix.dtype).reshape(end - start, *matrix.shape[1:])
            products.append(np.asarray(product(rows), np.float32))
    return np.concatenate(products)


def read_rows_from_file(matrix: np.ndarray, rows: np.ndarray | list[int]) -> np.ndarray:
    """`matrix[rows]` as a new array, like `read_rows`, but copied out of the file when
    `matrix` views a mapping: one positioned read per run of consecutive rows asked for,
    no page of the mapping touched, nothing counted against `RESIDENT_BUDGET` (`read_rows`
    where the file cannot be read, `_file`)."""
    rows = np.asarray(rows, np.int64).reshape(-1)
    located = _mapped(matrix) if len(rows) else None
    if located is None:
        return np.asarray(matrix[rows])
    descriptor = _file(located[0])
    if descriptor is None:
        return read_rows(matrix, rows)
    if rows.min() < -len(matrix) or rows.max() >= len(matrix):
        raise IndexError(f"rows outside the {len(matrix)} rows of the matrix")
    root, first = located
    rows = np.where(rows < 0, rows + len(matrix), rows)
    unique, inverse = np.unique(rows, return_inverse=True)
    read = np.empty((len(unique), *matrix.shape[1:]), matrix.dtype)
    into = read.reshape(-1).view(np.uint8)
    row_bytes = matrix.strides[0]
    breaks = np.flatnonzero(np.diff(unique) != 1) + 1
    lows = np.concatenate([[0], breaks]) * row_bytes
    highs = np.concatenate([breaks, [len(unique)]]) * row_bytes
    offsets = first + unique[np.concatenate([[0], breaks])] * row_bytes
    view = memoryview(into)
    for low, high, offset in zip(lows.tolist(), highs.tolist(), offsets.tolist(), strict=True):
        # one call per run; `_read_into` finishes a short read or reports the file short
        if not _PREADV or os.preadv(descriptor, [view[low:high]], offset) != high - low:
            _read_into(root, offset, into[low:high])
    ordered = len(unique) == len(rows) and bool(np.all(unique == rows))
    return read if ordered else read[inverse.reshape(-1)]


def _buffer(size: int) -> np.ndarray:
    """This thread's reused byte buffer of at least `size` bytes, page-aligned (spans are
    multiplied at the alignment a mapping gives them); grown when too small."""
    held = getattr(_BUFFERS, "array", None)
    if held is None or len(held) < size:
        raw = np.empty(size + _PAGE, np.uint8)
        skip = -raw.ctypes.data % _PAGE
        held = _BUFFERS.array = raw[skip : skip + size]
    return held


def _read_into(root: np.memmap, offset: int, into: np.ndarray) -> None:
    """Fill the bytes `into` from byte `offset` of `root`'s file (`_file` has opened it)."""
    descriptor = root.__dict__[_FILE]
    view = memoryview(into).cast("B")
    done = 0
    while done < len(view):
        if _PREADV:
            count = os.preadv(descriptor, [view[done:]], offset + done)
        else:  # platforms without preadv: a copy through bytes
            data = os.pread(descriptor, len(view) - done, offset + done)
            view[done : done + len(data)] = data
            count = len(data)
        if count <= 0:
            raise OSError(f"{root.filename}: {len(view) - done} bytes short at {offset + done}")
        done += count


def _file(root: np.memmap) -> int | None:
    """A read-only descriptor of `root`'s file, opened once per mapping and closed with
    it; None (and the mapping is read instead) where the file is gone or is not the one
    mapped (another size, or other bytes in its first or last page). A graph index's files
    are never rewritten once published, so this only guards a file removed or replaced
    under a long-lived reader."""
    descriptor = root.__dict__.get(_FILE)
    if descriptor is None:
        with _LOCK:
            descriptor = root.__dict__.get(_FILE)
            if descriptor is None:
                descriptor = _open_same(root)
                root.__dict__[_FILE] = descriptor
    return descriptor if descriptor >= 0 else None


def _open_same(root: np.memmap) -> int:
    """`_file`'s descriptor, or -1."""
    mapping = root._mmap  # type: ignore[attr-defined]
    try:
        descriptor = os.open(root.filename, os.O_RDONLY)
    except OSError:
        return -1
    weakref.finalize(root, os.close, descriptor)
    size = os.fstat(descriptor).st_size
    mapped_from = _mapped_from(root)
    if size != mapped_from + len(mapping):
        return -1
    # two pages compared through the mapping: their windows stay mapped (128 KB a file)
    for start in (0, max(len(mapping) - _PAGE, 0)):
        end = min(start + _PAGE, len(mapping))
        if os.pread(descriptor, end - start, mapped_from + start) != mapping[start:end]:
            return -1
    return descriptor


def _mapped_from(root: np.memmap) -> int:
    """The file byte `root`'s mapping starts at: np.memmap maps the file from its offset
    rounded down to the allocation granularity."""
    return int(root.offset) - int(root.offset) % mmap.ALLOCATIONGRANULARITY


def _hand_back(root: np.memmap, first: int, begin: int, end: int) -> None:
    """Hand back the pages of bytes [begin, end) of the matrix whose first row is at file
    byte `first` of `root`'s mapping, widened by a fault-around `WINDOW` each side (the
    kernel mapped the neighbours' pages with the span's edges) to whole windows: pages of
    rows outside the span are mapped again when next touched."""
    mapped_from = _mapped_from(root)
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
