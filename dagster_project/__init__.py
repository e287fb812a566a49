"""Dagster definitions of kgmem: a folder per stage under `defs/`, resources in `resources/`."""
