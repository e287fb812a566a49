"""Stage `graph_index`."""
