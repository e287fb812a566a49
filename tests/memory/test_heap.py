"""`memory.heap`: a query process keeps freed work arrays in its heap (glibc), so the next
query's arrays are not faulted in page by page again; the environment's own settings win."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import ctypes, sys
import numpy as np
from memory.heap import keep_freed_memory

class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
kept = keep_freed_memory() if sys.argv[1] == "keep" else False
work = np.ones(20 << 17)  # 20 MiB, below the mmap threshold once kept
work.sum()
del work
print("heap:", kept, libc.mallinfo2().fordblks >> 20)
"""


def _probe(mode: str, **env: str) -> tuple[bool, int]:
    """(whether the settings were made, MiB free in the heap after a 20 MiB array is
    freed), in a fresh process whose environment has no glibc malloc variables but `env`
    (the suite's own environment must not decide the outcome)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode],
        capture_output=True,
        text=True,
        check=True,
        env={**clean, **env},
        cwd=Path(__file__).resolve().parents[2],
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("heap: ")]
    assert lines, f"no probe output: {done.stdout[-1000:]} {done.stderr[-1000:]}"
    kept, free = lines[-1].removeprefix("heap: ").split()
    return kept == "True", int(free)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_freed_work_arrays_stay_in_the_heap() -> None:
    kept, free = _probe("keep")
    assert kept, "the settings were not made"
    assert free >= 20
    default, free = _probe("default")
    assert not default and free < 20, "glibc's defaults hand the array back"


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_the_environment_settings_win() -> None:
    kept, _ = _probe("keep", MALLOC_TRIM_THRESHOLD_="1048576")
    assert not kept
