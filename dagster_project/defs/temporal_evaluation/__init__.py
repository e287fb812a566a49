"""Stage `temporal_evaluation`."""
