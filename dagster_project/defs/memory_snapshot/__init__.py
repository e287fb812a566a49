"""Stage `memory_snapshot`."""
