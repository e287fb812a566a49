"""A stage's outcome as its asset's `MaterializeResult`: the metadata every stage reports
(`dagster_project.metadata_keys`, so the CLI summary and the UI show the same figures),
its contract and quarantine-rate check results, and the seconds the stage took."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import dagster as dg

from dagster_project.defs.contract_check import contract_result
from dagster_project.defs.quarantine_check import quarantine_rate_result
from dagster_project.metadata_keys import (
    QUARANTINED,
    ROWS_IN,
    ROWS_OUT,
    SECONDS,
    SKIP_REASON,
    SKIPPED,
)
from dagster_project.stage_events import StageSummary, tell
from pipelines.outcome import StageOutcome


def materialized(stage: str, run: Callable[[], StageOutcome]) -> dg.MaterializeResult:
    """Run a stage (`run()`) and report its outcome as `stage`'s materialisation, telling
    an in-process build when it starts and ends (`dagster_project.stage_events`)."""
    tell(stage, None)
    started = time.perf_counter()
    outcome = run()
    figures = {
        ROWS_IN: outcome.rows_in,
        ROWS_OUT: outcome.rows_out,
        QUARANTINED: outcome.quarantined,
        SECONDS: round(time.perf_counter() - started, 3),
        SKIPPED: outcome.skipped and outcome.skip_reason is None,
        **({SKIP_REASON: outcome.skip_reason} if outcome.skip_reason else {}),
        **outcome.details,
    }
    checks = []
    if outcome.contract_rows is not None:
        checks.append(contract_result(stage, outcome.contract_rows.to_pandas()))
    if outcome.quarantine_rate is not None:
        checks.append(quarantine_rate_result(stage, outcome.quarantine_rate))
    tell(stage, StageSummary.of(stage, figures, {c.check_name: c.passed for c in checks}))
    metadata = {key: _metadata_value(value) for key, value in figures.items()}
    return dg.MaterializeResult(metadata=metadata, check_results=checks)


def _metadata_value(value: Any) -> Any:
    return dg.MetadataValue.json(value) if isinstance(value, dict | list) else value


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
    """The standard metadata for an asset that is not a build stage (the evaluations),
    with the seconds since `started` and any extra metadata."""
    metadata = {
        ROWS_IN: rows_in,
        ROWS_OUT: rows_out,
        QUARANTINED: quarantined,
        SECONDS: round(time.perf_counter() - started, 3),
        SKIPPED: skipped,
        **extra,
    }
    return dg.MaterializeResult(metadata=metadata, check_results=list(check_results))
