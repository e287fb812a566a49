"""The blocking quarantine-rate check of an extraction stage.

An extraction stage whose output is mostly quarantined has failed, whatever its exit
status: an LLM that answers nothing valid (39 of 39 answers set aside) or an NER model that
rejects most segments. The check fails when the share of records set aside,
quarantined / (kept + quarantined), exceeds `BuildSettings.max_quarantine_rate`, which
stops the build at that stage with the counts in its message. It guards `llm_triplets`, the
extraction stage that sets records aside; the NER and relation stages quarantine nothing
(each model output is a valid record by construction), so they have no rate to check.
"""

from __future__ import annotations

import dagster as dg

from pipelines.outcome import QuarantineRate


def quarantine_rate_spec(asset: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        f"{asset}_quarantine_rate",
        asset=asset,
        blocking=True,
        description=f"share of `{asset}` records quarantined is at most max_quarantine_rate",
    )


def quarantine_rate_result(asset: str, counted: QuarantineRate) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=f"{asset}_quarantine_rate",
        asset_key=asset,
        passed=counted.passed,
        metadata={
            "kept": counted.kept,
            "quarantined": counted.quarantined,
            "rate": round(counted.rate, 4),
        },
        description=f"{counted.quarantined} of {counted.kept + counted.quarantined} records "
        f"quarantined ({counted.rate:.0%}; the limit is {counted.max_rate:.0%})",
    )
