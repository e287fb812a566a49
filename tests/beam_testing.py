"""Beam test pipelines on the runner kgmem's stages run on (`pipelines.options`).

A bare `TestPipeline()` gets Beam's `DirectRunner`, which since Beam 2.6x first tries
Prism: it makes a temporary job-server folder (`/tmp/beam-temp*`) before it looks for the
Go binary, and only a job server that started removes it, so every such pipeline left an
empty folder behind (~21 a test run) and spent 0.07-0.2 s on the attempt. The stages name
the Python direct runner (the FnApiRunner), and so do the tests."""

from __future__ import annotations

from typing import Any

from apache_beam.testing.test_pipeline import TestPipeline

from pipelines.options import DIRECT_RUNNER_IMPL


def direct_test_pipeline(**kwargs: Any) -> TestPipeline:
    """A `TestPipeline` on the FnApiRunner (`kwargs` as `TestPipeline` takes them)."""
    return TestPipeline(runner=DIRECT_RUNNER_IMPL, **kwargs)
