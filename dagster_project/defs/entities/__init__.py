"""Stage `entities`."""
