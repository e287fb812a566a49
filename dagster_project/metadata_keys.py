"""The metadata keys every stage reports, so the CLI summary and the UI show the same
figures."""

ROWS_IN, ROWS_OUT, QUARANTINED, SECONDS, SKIPPED = (
    "rows_in",
    "rows_out",
    "quarantined",
    "seconds",
    "skipped_unchanged",
)
