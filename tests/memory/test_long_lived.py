"""The query process's long-lived objects are frozen out of the collector's full walks:
garbage is collected first, live objects are frozen, `release_frozen` hands them back,
and a `Memory` freezes at open and after its first query, and releases at close."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory import Memory
from memory.long_lived import freeze_long_lived, release_frozen


class Node:
    """A container that can sit in a reference cycle and be weakly referenced."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    """Each test starts and ends with nothing frozen (the rest of the suite relies on it)."""
    release_frozen()
    yield
    release_frozen()


def test_garbage_is_collected_and_live_objects_are_frozen() -> None:
    dead, live = Node(), Node()
    dead.other = Node()
    dead.other.other = dead  # a cycle: only the collector frees it
    gone = weakref.ref(dead)
    del dead
    assert gone() is not None, "the cycle outlives its last name until a collection"
    frozen = freeze_long_lived()
    assert gone() is None, "garbage was collected before the freeze"
    # Frozen objects only leave the permanent generation, when freed: a thread of an
    # earlier test (anyio's idle workers end after 10 s) may free some in between.
    assert 0 < gc.get_freeze_count() <= frozen
    assert not any(o is live for o in gc.get_objects()), "frozen: out of every generation"


def test_released_objects_are_collectable_again() -> None:
    held = Node()
    held.other = Node()
    held.other.other = held
    freeze_long_lived()
    cycle = weakref.ref(held)
    del held
    gc.collect()
    assert cycle() is not None, "a frozen cycle waits"
    release_frozen()
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert cycle() is None, "released, the next full collection frees it"


def test_memory_freezes_at_open_and_first_query_and_releases_at_close(graph_build) -> None:
    with Memory.open(graph_build.root) as memory:
        at_open = gc.get_freeze_count()
        assert at_open > 0
        memory.query("Who is the CEO of Acme Corporation?", strategy="hipporag_ppr", k=3)
        assert gc.get_freeze_count() > at_open, "the first query's structures froze too"
    assert gc.get_freeze_count() == 0


def test_a_process_that_never_closes_its_memory_exits_quietly(graph_build) -> None:
    """Everything frozen is unfrozen at exit, so the interpreter's last collection reaches
    it: DuckDB's bindings report no leaked instances on stderr."""
    script = (
        "import sys\n"
        "from memory import Memory\n"
        "memory = Memory.open(sys.argv[1])\n"
        "memory.query('Who is the CEO of Acme Corporation?', strategy='hipporag_ppr', k=2)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(graph_build.root)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "leaked" not in done.stderr, done.stderr[-2000:]
