"""Stage `graph_embeddings`."""
