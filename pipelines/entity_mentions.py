"""Beam pipeline: segments (Parquet) -> NER in batches -> entity mentions (Parquet).

The backend comes from `NerBackendConfig`: `spacy` runs a spaCy pipeline in a DoFn over
batches, `hf` runs a Hugging Face token classifier through `RunInference` with a
`KeyedModelHandler` (the key is the segment row, so mentions get their provenance without a
join) on the same batches (`with_no_batching`: RunInference's own `BatchElements` loses
batches on the Dask runner, `pipelines.stage_io`). Both write ENTITY_MENTIONS rows.
`bare_throughput` times a backend's model alone, without Beam.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import apache_beam as beam
from apache_beam.ml.inference.base import KeyedModelHandler, PredictionResult, RunInference

from pipelines.launcher import run_segment_stage
from pipelines.options import NerBackendConfig, run_stage
from pipelines.outcome import StageOutcome, value_counts
from pipelines.settings import BuildSettings
from pipelines.stage_io import ReadStageInput, WriteShards
from schemas.tables import ENTITY_MENTIONS
from stores.warehouse import WarehouseStore
from transforms.hf_ner import HfNerModelHandler
from transforms.markup import mask_markup
from transforms.ner import NER_COMPONENTS, SpacyNerDoFn, span_mentions
from transforms.ner_backends import SPACY_BACKEND
from transforms.spacy_models import load_spacy

STAGE = "entity_mentions"


class ExtractMentions(beam.PTransform):
    """Batches of segment rows -> ENTITY_MENTIONS rows, by the configured NER backend:
    spaCy in a DoFn, or a Hugging Face token classifier through `RunInference` keyed by the
    segment row (so mentions keep their provenance without a join)."""

    def __init__(self, cfg: NerBackendConfig) -> None:
        super().__init__()
        self.cfg = cfg

    def expand(self, batches: beam.PCollection) -> beam.PCollection:
        cfg = self.cfg
        if cfg.backend == SPACY_BACKEND:
            return batches | "SpacyNer" >> beam.ParDo(SpacyNerDoFn(cfg.model, cfg.max_batch_size))
        return (
            batches
            | "KeyBySegment" >> beam.Map(_keyed_texts)
            | "HfNer" >> RunInference(KeyedModelHandler(hf_handler(cfg)).with_no_batching())
            | "MentionRows" >> beam.FlatMap(_keyed_mentions)
        )


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: NerBackendConfig
) -> beam.PCollection:
    """Add NER to `p`: read segments in batches, extract mentions, write sharded Parquet."""
    read = ReadStageInput(input_pattern, cfg.max_batch_size)
    mentions = p | "ReadSegments" >> read | "ExtractMentions" >> ExtractMentions(cfg)
    mentions | "WriteMentions" >> WriteShards(output_prefix, ENTITY_MENTIONS, read.num_files)
    return mentions


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """NER over the chunks and turns of the documents not yet processed."""
    config = settings.ner_stage()
    done = run_segment_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        build=build,
        output_schema=ENTITY_MENTIONS,
        config=config,
    )
    return done.outcome(
        model=config.model_tag,
        runner=settings.beam_runner,
        labels=value_counts(done.output.column("label").to_pylist()),
    )


def hf_handler(cfg: NerBackendConfig) -> HfNerModelHandler:
    """The model handler of an `hf` NER configuration."""
    return HfNerModelHandler(
        cfg.model,
        device=cfg.device,
        max_batch_size=cfg.max_batch_size,
        max_length=cfg.max_length,
        stride=cfg.stride,
    )


def _keyed_texts(batch: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    return [(segment, mask_markup(segment["text"])) for segment in batch]


def _keyed_mentions(keyed: tuple[dict[str, Any], PredictionResult]) -> Iterator[dict[str, Any]]:
    segment, result = keyed
    return span_mentions(segment, result.inference, result.model_id)


def bare_throughput(cfg: NerBackendConfig, texts: Sequence[str]) -> float:
    """Segments per second of the backend's model alone on `texts`, in batches of
    `cfg.max_batch_size`: no Beam, model loading and one warm-up batch not timed."""
    if not texts:
        raise ValueError("throughput needs at least one text")
    batches = [texts[i : i + cfg.max_batch_size] for i in range(0, len(texts), cfg.max_batch_size)]
    if cfg.backend == SPACY_BACKEND:
        nlp = load_spacy(cfg.model, NER_COMPONENTS)

        def infer(batch: Sequence[str]) -> None:
            list(nlp.pipe(batch, batch_size=cfg.max_batch_size))
    else:
        handler = hf_handler(cfg)
        model = handler.load_model()

        def infer(batch: Sequence[str]) -> None:
            handler.run_inference(batch, model)

    infer(batches[0])
    started = time.perf_counter()
    for batch in batches:
        infer(batch)
    return len(texts) / (time.perf_counter() - started)


def main(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, NerBackendConfig)


if __name__ == "__main__":
    main()
