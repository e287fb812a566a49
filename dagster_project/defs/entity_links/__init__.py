"""Stage: untyped entity links of the memory graph (co-occurrence, synonyms)."""
