"""Stage: the common-noun phrases of every segment (phrase nodes of the memory graph)."""
