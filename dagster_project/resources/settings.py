"""Build settings as a Dagster resource: `pipelines.settings.BuildSettings` as config."""

from __future__ import annotations

import dagster as dg

from pipelines.settings import BuildSettings


class PipelineSettings(dg.ConfigurableResource, BuildSettings):
    """Model choices, chunking budget and Beam runner for every stage of a build."""
