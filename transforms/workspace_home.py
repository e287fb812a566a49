"""Where the workspace is when nobody says: the one setting that every layer reads, kept
here so that pure modules (a stage's command-line entry, a backend that loads an artefact
from the workspace) need not import the storage layer (`stores.workspace`) to find it."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "KGMEM_HOME"
DEFAULT_HOME = "kgmem_home"


def default_home() -> Path:
    """The workspace folder named by `KGMEM_HOME`, else `./kgmem_home` (absolute)."""
    return Path(os.environ.get(HOME_ENV, DEFAULT_HOME)).resolve()
