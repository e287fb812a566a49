"""Pipeline settings as a Dagster resource: models, chunking and the Beam runner."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from pipelines.options import DEFAULT_RUNNER, NerBackendConfig, SpacyStageConfig, pipeline_options
from transforms.embedding import DEFAULT_ENCODER
from transforms.entity_resolution import ResolutionConfig
from transforms.ner import SPACY_BACKEND
from transforms.relation_registry import (
    DEFAULT_ALIASES,
    DEFAULT_CARDINALITY,
    RelationRegistry,
    alias_config,
    parse_alias_config,
)
from transforms.segmenting import DEFAULT_CHUNK_TOKENS
from transforms.spacy_models import DEFAULT_SPACY_MODEL


class PipelineSettings(dg.ConfigurableResource):
    """Model choices, chunking budget and Beam runner for every stage of a build."""

    chunk_tokens: int = Field(DEFAULT_CHUNK_TOKENS, description="token budget of a document chunk")
    spacy_model: str = Field(DEFAULT_SPACY_MODEL, description="spaCy package name or model path")
    ner_backend: str = Field(
        SPACY_BACKEND,
        description="NER backend: 'spacy' (the spaCy pipeline) or 'hf' (a Hugging Face "
        "token-classification model run through Beam RunInference)",
    )
    ner_model: str | None = Field(
        None,
        description="NER model: Hugging Face model id or path for 'hf' (default BERT-large "
        "fine-tuned on CoNLL-2003), spaCy package or path for 'spacy' (default spacy_model)",
    )
    device: str = Field(
        "auto", description="device of the 'hf' NER model: auto (CUDA when available), cpu, cuda"
    )
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
    relation_aliases: dict[str, str] = Field(
        default_factory=lambda: alias_config(DEFAULT_ALIASES),
        description="raw relation -> canonical relation; 'retract:REL' marks a retraction of REL",
    )
    relation_cardinality: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_CARDINALITY),
        description="relation -> single | single_by_tail | multi | unknown (others are learned)",
    )
    theta_str: float = Field(0.85, description="Levenshtein similarity that merges entities")
    theta_ctx: float = Field(0.90, description="embedding cosine that merges entities")
    short_key: int = Field(4, description="keys this short merge only by exact or normalised form")
    cardinality_min_support: int = Field(
        3, description="heads that must change tail (and never hold two) to learn 'single'"
    )

    def beam_options(self):  # noqa: ANN201 (PipelineOptions)
        """Beam options for the configured runner."""
        return pipeline_options(self.beam_runner, self.direct_running_mode, self.beam_flags)

    def resolution(self) -> ResolutionConfig:
        """Thresholds of the entity-resolution cascade."""
        return ResolutionConfig(
            theta_str=self.theta_str, theta_ctx=self.theta_ctx, short_key=self.short_key
        )

    def registry(self) -> RelationRegistry:
        """The relation registry (aliases, cardinalities) facts are folded with."""
        return RelationRegistry(
            parse_alias_config(self.relation_aliases),
            self.relation_cardinality,
            self.cardinality_min_support,
        )

    def ner_stage(self) -> NerBackendConfig:
        """Config of the NER stage: backend, model, batch bounds and device."""
        spacy_default = self.spacy_model if self.ner_backend == SPACY_BACKEND else None
        return NerBackendConfig(
            self.ner_backend,
            self.ner_model or spacy_default,
            max(1, self.batch_size // 4),
            self.batch_size,
            self.device,
        )

    def spacy_stage(self) -> SpacyStageConfig:
        """Config of the spaCy-backed Beam stages."""
        return SpacyStageConfig(self.spacy_model, max(1, self.batch_size // 4), self.batch_size)
