"""Pipeline settings as a Dagster resource: models, chunking and the Beam runner."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from pipelines.options import DEFAULT_RUNNER, SpacyStageConfig, pipeline_options
from transforms.embedding import DEFAULT_ENCODER
from transforms.segmenting import DEFAULT_CHUNK_TOKENS
from transforms.spacy_models import DEFAULT_SPACY_MODEL


class PipelineSettings(dg.ConfigurableResource):
    """Model choices, chunking budget and Beam runner for every stage of a build."""

    chunk_tokens: int = Field(DEFAULT_CHUNK_TOKENS, description="token budget of a document chunk")
    spacy_model: str = Field(DEFAULT_SPACY_MODEL, description="spaCy package name or model path")
    encoder_model: str = Field(
        DEFAULT_ENCODER, description="sentence-transformers model id or path for embeddings"
    )
    beam_runner: str = Field(
        DEFAULT_RUNNER, description="Beam runner (DirectRunner, PrismRunner, ...)"
    )
    direct_running_mode: str = Field(
        "in_memory", description="DirectRunner mode: in_memory, multi_threading, multi_processing"
    )
    beam_flags: list[str] = Field(
        default_factory=list, description="extra Beam flags, e.g. ['--flink_master=host:8081']"
    )
    batch_size: int = Field(64, description="segments per model batch")

    def beam_options(self):  # noqa: ANN201 (PipelineOptions)
        """Beam options for the configured runner."""
        return pipeline_options(self.beam_runner, self.direct_running_mode, self.beam_flags)

    def spacy_stage(self) -> SpacyStageConfig:
        """Config of the spaCy-backed Beam stages."""
        return SpacyStageConfig(self.spacy_model, max(1, self.batch_size // 4), self.batch_size)
