"""Run a table's expectation suite on a pandas frame and report the outcome compactly.

One ephemeral GX context per process holds a pandas datasource with one dataframe asset
per table; every call re-uses them, so validating many batches in one process never
collides on names. The GX result is condensed into a frozen `ContractReport` that
pipelines can raise on and Dagster can attach as metadata.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

import great_expectations as gx
import numpy as np
import pandas as pd
from great_expectations.core import ExpectationValidationResult
from great_expectations.core.batch_definition import BatchDefinition
from great_expectations.data_context.types.base import ProgressBarsConfig
from great_expectations.datasource.fluent import PandasDatasource

from data_contracts.suites import N_SOURCE_SEGMENTS, SUITES

SAMPLE_SIZE = 5
"""Unexpected values kept per failed expectation."""


@dataclass(frozen=True)
class ContractFailure:
    """One failed expectation; `sample` holds up to SAMPLE_SIZE unexpected values, or the
    error message when the expectation could not run (e.g. its column is missing)."""

    expectation: str
    column: str | None
    unexpected_count: int
    sample: tuple[str, ...]


@dataclass(frozen=True)
class ContractReport:
    """Outcome of validating one frame against its table's suite."""

    table: str
    success: bool
    evaluated: int
    rows: int
    failures: tuple[ContractFailure, ...]

    def summary(self) -> str:
        """One line: verdict, counts and the names of failed expectations."""
        verdict = "passed" if self.success else "FAILED"
        line = f"{self.table}: contract {verdict} ({self.evaluated} expectations, {self.rows} rows)"
        if self.failures:
            names = ", ".join(f"{f.expectation}[{f.column}]" for f in self.failures)
            line += f"; failed: {names}"
        return line

    def as_metadata(self) -> dict[str, str | int | bool]:
        """Flat scalar mapping for Dagster asset or check metadata."""
        return {
            "table": self.table,
            "success": self.success,
            "expectations_evaluated": self.evaluated,
            "expectations_failed": len(self.failures),
            "rows": self.rows,
            "summary": self.summary(),
        }


@functools.cache
def _datasource() -> PandasDatasource:
    """The process-wide ephemeral context's pandas datasource (quiet: no analytics, no bars,
    no INFO line about its temporary docs site)."""
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")
    context.enable_analytics(False)
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context.data_sources.add_pandas("kgmem")


@functools.cache
def _batch_definition(table: str) -> BatchDefinition:
    asset = _datasource().add_dataframe_asset(table)
    return asset.add_batch_definition_whole_dataframe(table)


def _with_derived_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the columns the suites expect but the tables do not store."""
    if "source_segment_ids" not in frame.columns:
        return frame
    counts = [
        len(ids) if isinstance(ids, list | tuple | np.ndarray) else 0
        for ids in frame["source_segment_ids"]
    ]
    return frame.assign(**{N_SOURCE_SEGMENTS: pd.Series(counts, index=frame.index, dtype="int64")})


def _errors(exception_info: dict[str, Any]) -> tuple[str, ...]:
    """Messages of the exceptions an expectation raised (GX keys them by metric when the
    error happened while computing a metric)."""
    infos = [exception_info] if "raised_exception" in exception_info else exception_info.values()
    messages = (str(info["exception_message"]) for info in infos if info.get("raised_exception"))
    return tuple(dict.fromkeys(messages))


def _text(value: object) -> str:
    if isinstance(value, tuple | list):  # column-pair expectations report (A, B) pairs
        return "(" + ", ".join(str(item) for item in value) + ")"
    return str(value)


def _failure(result: ExpectationValidationResult) -> ContractFailure:
    config = result.expectation_config
    column = config.kwargs.get("column") or ",".join(
        config.kwargs[key] for key in ("column_A", "column_B") if key in config.kwargs
    )
    unexpected = tuple(_text(v) for v in result.result.get("partial_unexpected_list", []))
    return ContractFailure(
        expectation=config.type,
        column=column or None,
        unexpected_count=int(result.result.get("unexpected_count") or 0),
        sample=(_errors(result.exception_info or {}) or unexpected)[:SAMPLE_SIZE],
    )


def validate_frame(table: str, frame: pd.DataFrame) -> ContractReport:
    """Validate `frame` against the suite registered for `table` in `SUITES`."""
    if table not in SUITES:
        raise ValueError(f"unknown table {table!r}; known tables: {', '.join(sorted(SUITES))}")
    batch = _batch_definition(table).get_batch(
        batch_parameters={"dataframe": _with_derived_columns(frame)}
    )
    result = batch.validate(
        SUITES[table](),
        result_format={"result_format": "SUMMARY", "partial_unexpected_count": SAMPLE_SIZE},
    )
    return ContractReport(
        table=table,
        success=bool(result.success),
        evaluated=len(result.results),
        rows=len(frame),
        failures=tuple(_failure(r) for r in result.results if not r.success),
    )
