"""Stage `segments`."""
