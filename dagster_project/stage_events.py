"""Stage start and end, told to whoever builds in this process.

A CLI build runs its stages in one Dagster run (or a few, where a backfill holds an LLM
slot around a stage), executed in process and in lineage order; each stage's asset tells
the listener set here when it starts and what it reported when it ends, so the caller can
show progress and collect the stage summaries as they come. Outside such a build (a run
launched from the UI, in another process) nobody listens and nothing is told.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from dagster_project.metadata_keys import (
    QUARANTINED,
    ROWS_IN,
    ROWS_OUT,
    SECONDS,
    SKIP_REASON,
    SKIPPED,
)


@dataclass
class StageSummary:
    """Figures of one stage run, as reported in its materialisation metadata."""

    stage: str
    rows_in: int
    rows_out: int
    quarantined: int
    seconds: float
    skipped: bool
    checks: dict[str, bool] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, stage: str, metadata: dict[str, Any], checks: dict[str, bool]) -> StageSummary:
        return cls(
            stage=stage,
            rows_in=int(metadata.get(ROWS_IN, 0)),
            rows_out=int(metadata.get(ROWS_OUT, 0)),
            quarantined=int(metadata.get(QUARANTINED, 0)),
            seconds=float(metadata.get(SECONDS, 0.0)),
            skipped=bool(metadata.get(SKIPPED, False) or metadata.get(SKIP_REASON)),
            checks=checks,
            metadata=metadata,
        )


Listener = Callable[[str, StageSummary | None], None]
"""Called with (stage, None) when a stage starts and (stage, summary) when it ends."""

_listener: ContextVar[Listener | None] = ContextVar("stage_listener", default=None)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Tell `listener` about the stages run in this context."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def tell(stage: str, summary: StageSummary | None) -> None:
    """Tell the listener, if any, that `stage` started (None) or ended (its summary)."""
    listener = _listener.get()
    if listener is not None:
        listener(stage, summary)
