"""Names of the Beam runner settings, importable without Beam (the CLI's choices)."""

DEFAULT_RUNNER = "DirectRunner"
DIRECT_RUNNING_MODES = ("in_memory", "multi_threading", "multi_processing")
DASK_RUNNER = "DaskRunner"
"""Beam's Dask runner (`apache_beam.runners.dask`), on a `dask.distributed` cluster."""
