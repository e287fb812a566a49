"""Stage `fact_versions`."""
