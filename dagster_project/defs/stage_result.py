"""The metadata every stage reports, so the CLI summary and the UI show the same figures."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import dagster as dg

ROWS_IN, ROWS_OUT, QUARANTINED, SECONDS, SKIPPED = (
    "rows_in",
    "rows_out",
    "quarantined",
    "seconds",
    "skipped_unchanged",
)


def stage_result(
    *,
    started: float,
    rows_in: int,
    rows_out: int,
    quarantined: int = 0,
    skipped: bool = False,
    check_results: Sequence[dg.AssetCheckResult] = (),
    **extra: Any,
) -> dg.MaterializeResult:
    """MaterializeResult with the standard counts, elapsed seconds and any extra metadata."""
    metadata = {
        ROWS_IN: rows_in,
        ROWS_OUT: rows_out,
        QUARANTINED: quarantined,
        SECONDS: round(time.perf_counter() - started, 3),
        SKIPPED: skipped,
        **extra,
    }
    return dg.MaterializeResult(metadata=metadata, check_results=list(check_results))
