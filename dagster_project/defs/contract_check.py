"""Great-expectations contracts as blocking Dagster asset checks."""

from __future__ import annotations

import dagster as dg
import pandas as pd

from data_contracts import validate_frame


def contract_spec(asset: str) -> dg.AssetCheckSpec:
    """The blocking check spec of `asset`'s contract: a failure stops downstream stages."""
    return dg.AssetCheckSpec(
        f"{asset}_contract",
        asset=asset,
        blocking=True,
        description=f"great-expectations suite of the `{asset}` table (data_contracts/)",
    )


def contract_result(asset: str, frame: pd.DataFrame) -> dg.AssetCheckResult:
    """Validate `frame` against `asset`'s suite and report it as the check's result."""
    report = validate_frame(asset, frame)
    return dg.AssetCheckResult(
        check_name=f"{asset}_contract",
        asset_key=asset,
        passed=report.success,
        metadata=report.as_metadata(),
        description=report.summary(),
    )
