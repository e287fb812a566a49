"""Build settings: models, chunking, thresholds and the Beam runner of every stage.

A plain pydantic model, so stages run from any caller; the Dagster resource
`dagster_project.resources.PipelineSettings` is this model as resource config (the
launchpad, `kgmem.toml` and the command line set the same fields)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from pipelines.dask_cluster import scheduler_for
from pipelines.options import DEFAULT_RUNNER, NerBackendConfig, SpacyStageConfig, pipeline_options
from pipelines.parquet_io import DEFAULT_SHARD_ROWS
from transforms.embedding import DEFAULT_ENCODER, PACKAGED_E5
from transforms.entity_resolution import ResolutionConfig
from transforms.llm.config import LLMConfig, LLMStageConfig
from transforms.llm.gate import GateConfig
from transforms.llm.prompts import MEMORAI_TRIPLETS_V1
from transforms.ner_backends import DEFAULT_SPACY_MODEL, SPACY_BACKEND
from transforms.pair_window import DEFAULT_WINDOW
from transforms.relation_classifier.candidates import ClassifierConfig
from transforms.relation_classifier.probe import DEFAULT_NAME as DEFAULT_CLASSIFIER
from transforms.relation_classifier.probe import find_artifact
from transforms.relation_registry import (
    DEFAULT_ALIASES,
    DEFAULT_CARDINALITY,
    RelationRegistry,
    alias_config,
    parse_alias_config,
)
from transforms.segmenting import DEFAULT_CHUNK_TOKENS

if TYPE_CHECKING:
    from transforms.rgcn import RGCNConfig

DEFAULT_LLM_PROMPTS = {"session": MEMORAI_TRIPLETS_V1.version_id}
"""One MemORAI call per conversation session (its topic segment, citing turn ids); the REAL
and PersonalAI prompts are one setting away (`chunk: real_atomic_facts/v1`). A CPU-only
270M model answers a session in about 10-20 s, so per-chunk calls are opt-in."""


EMBEDDING_CACHE_ENV = "KGMEM_EMBEDDING_CACHE"
WORKSPACE_CACHE = "workspace"


class BuildSettings(BaseModel):
    """Model choices, chunking budget and Beam runner for every stage of a build."""

    chunk_tokens: int = Field(
        DEFAULT_CHUNK_TOKENS, gt=0, description="token budget of a document chunk (> 0)"
    )
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
        DEFAULT_ENCODER,
        description="encoder of every table: sentence-transformers model id or path, "
        f"or {PACKAGED_E5}",
    )
    fusion_encoder: str | None = Field(
        PACKAGED_E5,
        description="second encoder of segments, a signal of the `hybrid` strategy "
        f"(default {PACKAGED_E5}; a sentence-transformers id or path; none: off)",
    )
    beam_runner: str = Field(
        DEFAULT_RUNNER,
        description="Beam runner: DirectRunner, DaskRunner, PrismRunner, PortableRunner, "
        "FlinkRunner, SparkRunner, DataflowRunner (runner-specific options go in beam_flags)",
    )
    dask_address: str | None = Field(
        None,
        description="DaskRunner: address of the dask.distributed scheduler (tcp://host:8786); "
        "unset: a LocalCluster of beam_workers processes is started for the build",
    )
    direct_running_mode: str = Field(
        "in_memory", description="DirectRunner mode: in_memory, multi_threading, multi_processing"
    )
    beam_flags: list[str] = Field(
        default_factory=list, description="extra Beam flags, e.g. ['--flink_master=host:8081']"
    )
    beam_workers: int | None = Field(
        None,
        description="DirectRunner workers (direct_num_workers) in multi_threading or "
        "multi_processing mode, or the worker processes of the DaskRunner's LocalCluster; "
        "unset or 0: one per CPU",
    )
    parquet_shard_rows: int = Field(
        DEFAULT_SHARD_ROWS, description="rows per Parquet input shard handed to a Beam stage"
    )
    batch_size: int = Field(64, description="segments per model batch (NER, phrases, parse)")
    relation_aliases: dict[str, str] = Field(
        default_factory=lambda: alias_config(DEFAULT_ALIASES),
        description="raw relation -> canonical relation; 'retract:REL' marks a retraction of REL",
    )
    relation_cardinality: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_CARDINALITY),
        description="relation -> single | single_by_tail | multi | unknown (others are learned)",
    )
    llm_backend: str | None = Field(
        None,
        description="llama_cpp (packaged Gemma-3-270M), openai (any OpenAI-compatible "
        "endpoint), transformers, or none; unset: $KGMEM_LLM_BACKEND, else none (the stage "
        "is opt-in: the packaged 270M model keeps no triplet on the sample)",
    )
    llm_model: str | None = Field(None, description="GGUF path, served model name or HF id")
    llm_base_url: str | None = Field(None, description="OpenAI-compatible base URL")
    llm_threads: int | None = Field(None, description="llama.cpp threads (default: half the CPUs)")
    llm_max_concurrency: int = Field(4, description="LLM calls in flight per worker")
    llm_timeout_s: float = Field(120.0, description="seconds per LLM call attempt")
    llm_max_calls_per_segment: int = Field(1, description="LLM call budget per segment")
    llm_prompts: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_LLM_PROMPTS),
        description="segment kind (chunk, turn, session) -> comma-separated prompt versions",
    )
    llm_cache: str | None = Field(
        None,
        description="LLM answer cache (DuckDB file); unset: $KGMEM_LLM_CACHE or the workspace's",
    )
    embedding_cache: str | None = Field(
        None,
        description="embedding cache (DuckDB file), which workspaces on one machine may share; "
        f"unset: ${EMBEDDING_CACHE_ENV} or the workspace's; '{WORKSPACE_CACHE}': the "
        "workspace's whatever the environment says (what a cold-build benchmark needs)",
    )
    llm_min_entities: int = Field(2, description="graph entities a segment needs for a call")
    llm_facts: bool = Field(
        False, description="fold LLM triplets into fact_versions beside the other extractors"
    )
    max_quarantine_rate: float = Field(
        0.5,
        description="the LLM triplet stage fails its blocking check when more than this "
        "share of its answers is quarantined",
    )
    relation_classifier: str = Field(
        "probe",
        description="pair classifier: probe (trained in the workspace, used when present), "
        "hf (any Hugging Face sequence-classification RE model), or none",
    )
    relation_classifier_model: str = Field(
        DEFAULT_CLASSIFIER, description="probe artifact name or folder, or HF model id/path"
    )
    pair_window: int = Field(DEFAULT_WINDOW, description="KGERMAR W: max token distance of a pair")
    relation_min_confidence: float = Field(0.0, description="drop classified pairs below this")
    triple_alpha: float = Field(0.7, description="KGERMAR α in w = α·conf + (1−α)·freq/maxfreq")
    theta_conf: float = Field(0.5, description="KGERMAR θ_conf: triples need w above it")
    theta_str: float = Field(0.85, description="Levenshtein similarity that merges entities")
    theta_ctx: float = Field(0.90, description="embedding cosine that merges entities")
    short_key: int = Field(4, description="keys this short merge only by exact or normalised form")
    cardinality_min_support: int = Field(
        3, description="heads that must change tail (and never hold two) to learn 'single'"
    )
    rgcn_dim: int = Field(
        64, description="KGERMAR R-GCN hidden width (the last layer outputs the text dimension)"
    )
    rgcn_layers: int = Field(2, description="KGERMAR R-GCN layers (eq. 5)")
    rgcn_epochs: int = Field(60, description="full-batch link-prediction epochs (eq. 13)")
    rgcn_lr: float = Field(0.01, description="Adam learning rate of the R-GCN")
    rgcn_negatives: int = Field(4, description="corrupted tails per fact in the link loss")
    rgcn_bases: int = Field(4, description="R-GCN basis matrices under basis decomposition")
    rgcn_basis_threshold: int = Field(
        8, description="use basis decomposition when relation types exceed this"
    )
    rgcn_seed: int = Field(0, description="seed of R-GCN initialisation and negative sampling")
    rgcn_device: str = Field("cpu", description="R-GCN device: cpu, cuda, or auto")
    rgcn_threads: int = Field(1, description="CPU threads of the R-GCN run (fixed: reproducible)")
    rgcn_min_confidence: float = Field(
        0.0, description="current facts below this confidence are left out of the R-GCN graph"
    )
    rgcn_staleness: float = Field(
        0.1,
        description="R-GCN drift bound: a rebuild warm-starts from the last weights until the "
        "triples changed since the last cold run exceed this share (0: always train cold)",
    )
    rgcn_warm_epochs: int = Field(15, description="epochs of a warm-started R-GCN run")

    @property
    def second_encoder(self) -> str | None:
        """The fusion encoder, or None when it is off or the same as the main encoder."""
        chosen = (self.fusion_encoder or "").strip()
        if chosen.lower() in ("", "none", "off") or chosen == self.encoder_model:
            return None
        return chosen

    def beam_options(self, stage_flags: Sequence[str] = ()):  # noqa: ANN201 (PipelineOptions)
        """Beam options for the configured runner; `stage_flags` (a stage's storage and
        progress flags, `pipelines.launcher`) come before the configured `beam_flags`,
        which therefore win, as on any Beam command line."""
        return pipeline_options(
            self.beam_runner,
            self.direct_running_mode,
            [*stage_flags, *self.beam_flags],
            self.beam_workers,
            self.dask_address,
        )

    @contextmanager
    def dask_cluster(self) -> Iterator[BuildSettings]:
        """These settings for the duration of a build or a stage launch: unchanged unless
        they choose the DaskRunner without naming a scheduler; then a `LocalCluster` of
        `beam_workers` processes is started for the duration and the settings yielded
        name it in `dask_address` (`pipelines.dask_cluster` says why that cluster)."""
        with scheduler_for(
            self.beam_runner, self.dask_address, self.beam_flags, self.beam_workers
        ) as address:
            if address == self.dask_address:
                yield self
            else:  # a new instance: Dagster builds a resource from its construction values
                fields = {name: getattr(self, name) for name in BuildSettings.model_fields}
                yield type(self)(**{**fields, "dask_address": address})

    @property
    def llm_enabled(self) -> bool:
        """Whether an LLM backend is configured (`llm_backend` or `$KGMEM_LLM_BACKEND`)."""
        return (self.llm_backend or os.environ.get("KGMEM_LLM_BACKEND") or "none") != "none"

    def llm_stage(self, cache_path: str) -> LLMStageConfig | None:
        """Config of the LLM triplet stage (`cache_path`: the workspace's cache file unless
        configured otherwise), None when the backend is "none".

        The stage is opt-in: with `llm_backend` unset and no `$KGMEM_LLM_BACKEND` it does not
        run, because the only offline model, Gemma-3-270M, spends minutes on the sample and
        keeps no valid triplet (issue 14's measurement; README, "The LLM stage")."""
        if not self.llm_enabled:
            return None
        llm = LLMConfig(
            backend=self.llm_backend or os.environ["KGMEM_LLM_BACKEND"],
            model=self.llm_model,
            base_url=self.llm_base_url,
            n_threads=self.llm_threads,
            max_concurrency=self.llm_max_concurrency,
            timeout_s=self.llm_timeout_s,
        )
        gate = GateConfig(
            prompts={k: tuple(v.split(",")) for k, v in self.llm_prompts.items() if v},
            max_calls_per_segment=self.llm_max_calls_per_segment,
            min_entities=self.llm_min_entities,
        )
        cache = self.llm_cache or os.environ.get("KGMEM_LLM_CACHE") or cache_path
        return LLMStageConfig(cache_path=cache, llm=llm, gate=gate)

    def embedding_cache_path(self, workspace_cache: Path) -> Path:
        """The embedding cache a build reads and fills: `embedding_cache`, else
        `$KGMEM_EMBEDDING_CACHE`, else the workspace's own file `workspace_cache`. Vectors
        are keyed by encoder, role and text hash, so any number of workspaces can share
        one file: a text embedded by one build is never embedded again on the machine."""
        if self.embedding_cache == WORKSPACE_CACHE:
            return workspace_cache
        chosen = self.embedding_cache or os.environ.get(EMBEDDING_CACHE_ENV)
        return Path(chosen).expanduser() if chosen else workspace_cache

    def relation_classifier_config(self, home: str) -> ClassifierConfig | None:
        """The pair classifier to run beside the dependency patterns: a trained probe found in
        the workspace (`kgmem train relation-classifier`), a Hugging Face model, or None."""
        if self.relation_classifier == "none":
            return None
        if (
            self.relation_classifier == "probe"
            and find_artifact(home, self.relation_classifier_model) is None
        ):
            return None
        return ClassifierConfig(
            backend=self.relation_classifier,
            model=self.relation_classifier_model,
            home=home,
            window=self.pair_window,
            min_confidence=self.relation_min_confidence,
        )

    def rgcn(self) -> RGCNConfig:
        """Configuration of the R-GCN behind KGERMAR's structural bank."""
        from transforms.rgcn import RGCNConfig  # torch loads only when a build trains

        return RGCNConfig(
            dim=self.rgcn_dim,
            layers=self.rgcn_layers,
            epochs=self.rgcn_epochs,
            lr=self.rgcn_lr,
            negatives=self.rgcn_negatives,
            bases=self.rgcn_bases,
            basis_threshold=self.rgcn_basis_threshold,
            seed=self.rgcn_seed,
            device=self.rgcn_device,
            threads=self.rgcn_threads,
        )

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
            backend=self.ner_backend,
            model=self.ner_model or spacy_default,
            max_batch_size=self.batch_size,
            device=self.device,
        )

    def spacy_stage(self) -> SpacyStageConfig:
        """Config of the spaCy-backed Beam stages."""
        return SpacyStageConfig(model=self.spacy_model, max_batch_size=self.batch_size)
