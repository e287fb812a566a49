"""Configurable resources: the workspace stores and the pipeline settings."""

from dagster_project.resources.settings import PipelineSettings
from dagster_project.resources.warehouse import WarehouseResource

__all__ = ["PipelineSettings", "WarehouseResource"]
