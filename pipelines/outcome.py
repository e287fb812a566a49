"""What a stage run reports, whoever runs it: the figures every stage has (rows in and out,
quarantined, skipped because its input was unchanged) and its own details.

The Dagster asset turns an outcome into its `MaterializeResult` (`dagster_project.defs.
stage_result`), so the CLI summary and the asset page show the same figures; a stage whose
table has a contract returns the rows to validate, and a stage that quarantines answers
returns the counts its quarantine-rate check weighs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from transforms.quarantine import quarantine_rate


@dataclass(frozen=True)
class QuarantineRate:
    """Rows a stage kept and quarantined in one run, against the largest quarantined share
    the build accepts."""

    kept: int
    quarantined: int
    max_rate: float

    @property
    def rate(self) -> float:
        return quarantine_rate(self.kept, self.quarantined)

    @property
    def passed(self) -> bool:
        return self.rate <= self.max_rate


@dataclass(frozen=True)
class StageOutcome:
    """One stage run. `details` are stage-specific figures (numbers, strings, or dicts and
    lists shown as JSON)."""

    rows_in: int
    rows_out: int
    quarantined: int = 0
    skipped: bool = False
    skip_reason: str | None = None
    """Why a skipped stage did not run, when not because its input was unchanged."""
    details: dict[str, Any] = field(default_factory=dict)
    contract_rows: pa.Table | None = None
    """The stage's whole table after the run, for its data contract (None: no contract)."""
    quarantine_rate: QuarantineRate | None = None
    """For a stage guarded by a quarantine-rate check."""


def unchanged() -> StageOutcome:
    """The outcome of a stage whose input fingerprint matched its last run."""
    return StageOutcome(rows_in=0, rows_out=0, skipped=True)


def value_counts(values: list[Any]) -> dict[str, int]:
    """How often each value occurs, by value, in first-seen order."""
    counts: dict[str, int] = {}
    for value in values:
        counts[str(value)] = counts.get(str(value), 0) + 1
    return counts
