"""The query process's heap: freed work arrays kept for the next query instead of handed
back to the kernel.

A graph strategy's query allocates and frees numpy arrays of 0.1-30 MB (a push round's
edge lists, path levels, score vectors over every segment). glibc's malloc returns the
top of its heap to the kernel once more than twice the last freed block lies free, and
serves blocks above its mmap threshold from fresh mappings, so nearly every such array
is faulted in page by page again, and on the benchmark machines (virtual machines) a
page fault is costly: measured, allocating and summing an int64 array of 176k values
took 1.75 ms with glibc's defaults and 0.15 ms with the settings below (20k values 0.15
against 0.02 ms, 3M values 8.7 against 2.5 ms); at 1M facts the graph strategies' query
CPU time fell by 4-8 ms (`hipporag_ppr`, `gram_paths`, `kgermar_fusion`), dense's by
less. The heap keeps at most `TRIM_THRESHOLD` of free memory at its top, so the resident
size stays within the query's own peak plus that.

Set once per process by `Memory.open`; left alone where the C library has no `mallopt`
(not glibc) or where the environment already sets glibc's own variables for them."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
TRIM_THRESHOLD = 128 << 20
"""Free memory the heap keeps at its top before returning any to the kernel."""
MMAP_THRESHOLD = 32 << 20
"""Blocks at least this large get their own mapping (and are unmapped when freed)."""
ENVIRONMENT = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")


@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc's trim and mmap thresholds (`TRIM_THRESHOLD`, `MMAP_THRESHOLD`) for this
    process; whether they were set."""
    if any(name in os.environ for name in ENVIRONMENT):
        return False
    library = ctypes.util.find_library("c")
    if library is None:
        return False
    try:
        mallopt = ctypes.CDLL(library).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and bool(
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    )
