"""Rows done of total for a running stage, in a small append-only file that the command
line polls: a long stage (NER over 50,000 segments, embedding them) shows how far it is.

The file has one line per event, `total N UNIT` (more work announced) or `done N` (work
finished), so several writers (the DirectRunner's worker processes, one per core) append
to it without coordination: a short line written with O_APPEND lands whole. A reader sums
the lines. Progress is best effort and never fails a stage: a worker that cannot write the
file (a remote runner's host, where the workspace path does not exist) counts nothing.

Writers flush at most every `FLUSH_SECONDS`, so counting costs one small write a second.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROGRESS_FILE = "progress.log"
FLUSH_SECONDS = 1.0


def stage_progress_file(stage_folder: Path) -> Path:
    """Where a stage run under `stage_folder` (its Parquet hand-off folder) counts its rows
    done."""
    return stage_folder / PROGRESS_FILE


@dataclass(frozen=True)
class Progress:
    """Rows done of total, as read from a progress file."""

    done: int
    total: int
    unit: str

    def describe(self) -> str:
        return f"{self.done:,}/{self.total:,} {self.unit}"


def start_progress(path: Path, total: int, unit: str) -> None:
    """Begin a stage's progress file at `path` (replacing an earlier run's): `total` rows
    of `unit` to do."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"total {total} {unit}\n", encoding="utf-8")


def _append(path: Path, line: str) -> None:
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return  # no file here (a remote worker, or nobody watches): nothing to count
    try:
        os.write(descriptor, line.encode("utf-8"))
    finally:
        os.close(descriptor)


def add_total(path: Path, count: int) -> None:
    """Announce `count` more rows to do."""
    if count:
        _append(path, f"total {count}\n")


def add_done(path: Path, count: int) -> None:
    """Record `count` more rows done."""
    if count:
        _append(path, f"done {count}\n")


def read_progress(path: Path) -> Progress | None:
    """The progress recorded at `path`, or None where there is none (yet)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    done = total = 0
    unit = "rows"
    for line in lines:
        kind, _, rest = line.partition(" ")
        count, _, named = rest.partition(" ")
        if not count.isdigit():
            continue  # a line being written
        if kind == "total":
            total += int(count)
            unit = named or unit
        elif kind == "done":
            done += int(count)
    return Progress(done, total, unit) if total else None


class Counter:
    """Counts rows and appends them to a progress file at most every `FLUSH_SECONDS`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pending = 0
        self.flushed_at = time.monotonic()

    def count(self, rows: int = 1) -> None:
        self.pending += rows
        if time.monotonic() - self.flushed_at >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        add_done(self.path, self.pending)
        self.pending = 0
        self.flushed_at = time.monotonic()


def progress_encoder(
    embed: Callable[[Sequence[str]], np.ndarray], path: Path
) -> Callable[[Sequence[str]], np.ndarray]:
    """`embed`, each call recording its texts done in the progress file at `path` when it
    returns; the vectors are `embed`'s. The total is the caller's to announce, once, before
    the work starts (`start_progress`), so that it does not grow while the stage runs."""

    def embed_with_progress(texts: Sequence[str]) -> np.ndarray:
        vectors = embed(texts)
        add_done(path, len(texts))
        return vectors

    return embed_with_progress
