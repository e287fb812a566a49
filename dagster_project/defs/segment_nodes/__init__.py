"""Stage: document topics and conversation structure of the memory graph."""
