"""Stage `extraction_evaluation`."""
