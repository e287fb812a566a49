"""The query process's long-lived objects, kept out of the cyclic garbage collector's walks.

Why: a process that opened a snapshot holds some 180,000 container objects that live as
long as it does: the modules of LanceDB, pyarrow, DuckDB and numpy, and the structures
the view builds on its first query. CPython's full (generation 2) collection walks every
one of them; measured on the bench's synthetic snapshots it took 104-123 ms (100k and 1M
facts; `hipporag_ppr`, `memorai_dwpr`, `real_beam`, `personalai_beam`), and it came about
once every 30-40 queries of a graph strategy, a query's whole latency budget spent at
random. `gc.freeze()` moves the objects alive at that moment to the permanent generation,
which no collection walks, so a full collection costs only what queries allocated since.

Garbage is collected first (`gc.collect()`), so nothing already unreachable is frozen.
At exit everything is unfrozen (an `atexit` hook, registered with the first freeze), so
the interpreter's last collection still reaches every object: without it, a process that
never closed its `Memory` ended with DuckDB's nanobind bindings reporting leaked
instances on stderr.
An object frozen and dropped later is still freed by its reference count; only a
reference cycle among frozen objects waits, until `release_frozen()` (`Memory.close`, the
end of a `with` block) hands every frozen object back to the collector. A process that
keeps other snapshots open loses their freeze until their next open or first query,
which costs it the walks again, never memory.
"""

from __future__ import annotations

import atexit
import functools
import gc


def freeze_long_lived() -> int:
    """Collect garbage, then freeze every object still alive; the frozen count."""
    _unfreeze_at_exit()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


@functools.cache
def _unfreeze_at_exit() -> None:
    atexit.register(release_frozen)


def release_frozen() -> None:
    """Hand every frozen object back to the collector (the oldest generation), so that
    reference cycles among them are freed by its next full collection."""
    gc.unfreeze()
