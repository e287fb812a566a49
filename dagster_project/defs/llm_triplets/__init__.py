"""Stage `llm_triplets`."""
