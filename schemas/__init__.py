"""Record shapes shared by every stage: the single source of truth for column names and types."""
