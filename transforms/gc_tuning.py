"""The cyclic garbage collector's thresholds for kgmem's processes.

A build process holds millions of long-lived objects once Dagster, Great Expectations,
Beam, torch, spaCy and LanceDB are imported, and CPython 3.11's default thresholds
(700, 10, 10) collect the youngest generation every 700 container allocations, with a
full collection, which traverses every one of those objects, every 100 of those. Measured
on a build of two documents (`python -m kgmem build --no-llm`, one process): 2,049
collections took 2.2 s of the process's 19 s of CPU, 1.8 s of it in full collections; in
a pytest process running three of the memory test files, 11.5 s of 153 s (3.6 s with
these thresholds).

`THRESHOLDS` collects the youngest generation every 50,000 allocations instead: 28
collections and none of them full on that build, 0.6 to 1.1 s of collecting, and the same
peak RSS within 1% (1,257 against 1,262 MB). kgmem's data rarely forms reference cycles
(rows are dicts, lists and Arrow or NumPy buffers), so what the collector finds later it
would have found little of sooner. The environment variable `KGMEM_GC_THRESHOLDS`
(comma-separated integers, for example "700,10,10" for Python's defaults) overrides it.
"""

from __future__ import annotations

import gc
import os

THRESHOLDS = (50_000, 20, 20)
ENV = "KGMEM_GC_THRESHOLDS"


def tune_gc() -> tuple[int, int, int]:
    """Set the collector's thresholds to `THRESHOLDS`, or to those of `KGMEM_GC_THRESHOLDS`
    where it is set (a ValueError naming it when it is not one to three integers >= 0);
    the thresholds now in force."""
    given = os.environ.get(ENV, "").strip()
    values = THRESHOLDS if not given else _parse(given)
    gc.set_threshold(*values)
    return gc.get_threshold()


def _parse(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if not 1 <= len(values) <= 3 or min(values) < 0:
        raise ValueError(f"{ENV}={text!r}: expected one to three integers >= 0, comma-separated")
    return values
