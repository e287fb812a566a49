"""Resident memory of the current process, for benchmarks that measure each piece of work in
a process of its own.

The peak is the process's own high-water mark, `VmHWM` of /proc/self/status: `ru_maxrss`
is not usable in a spawned child on Linux, because the kernel carries the parent's
high-water mark into a child across fork+exec (a spawned child of a 1 GiB parent reports
at least 1 GiB), and RUSAGE_CHILDREN inherits that too. Off Linux, ru_maxrss is the only
figure there is.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

STATUS = Path("/proc/self/status")


def own_peak_rss_mib() -> float:
    """This process's own peak RSS in MiB (VmHWM on Linux, else ru_maxrss)."""
    found = _status_mib("VmHWM:")
    if found is not None:
        return found
    scale = 1024 if os.uname().sysname == "Linux" else 1024 * 1024  # KiB on Linux, B on macOS
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale


def current_rss_mib() -> float | None:
    """This process's resident memory now, in MiB (None where /proc is not available)."""
    return _status_mib("VmRSS:")


def _status_mib(field: str) -> float | None:
    if not STATUS.exists():
        return None
    for line in STATUS.read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return None
