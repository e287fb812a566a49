"""Which of some modules a fresh Python process has imported after running some code: how
the tests check that a command or a process kind stays light."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

MODEL_LIBRARIES = ("torch", "sentence_transformers", "transformers")
"""What embedding may load: a query process none of them, a build torch only."""


def loaded_after(code: str, modules: Sequence[str]) -> list[str]:
    """`modules` (in their order) that are imported once `code` has run in a fresh process;
    the process must succeed."""
    names = tuple(modules)
    probe = (
        f"import sys\n{code}\nprint('loaded:' + ','.join(m for m in {names!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("loaded:"), done.stdout
    return [m for m in last.removeprefix("loaded:").split(",") if m]
