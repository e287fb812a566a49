"""The metadata keys every stage reports, so the CLI summary and the UI show the same
figures."""

ROWS_IN, ROWS_OUT, QUARANTINED, SECONDS, SKIPPED = (
    "rows_in",
    "rows_out",
    "quarantined",
    "seconds",
    "skipped_unchanged",
)
SKIP_REASON = "skip_reason"
"""Why a stage did not run although its input changed (the LLM stage without a backend):
reported as skipped with this reason, not as unchanged."""
