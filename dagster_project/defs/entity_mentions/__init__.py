"""Stage `entity_mentions`."""
