"""Stage `relation_candidates`."""
