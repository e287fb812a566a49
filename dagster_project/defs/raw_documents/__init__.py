"""Stage `raw_documents`."""
