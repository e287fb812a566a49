"""Beam pipeline: segments (Parquet) -> NER in batches -> entity mentions (Parquet).

The backend comes from `NerBackendConfig`: `spacy` runs a spaCy pipeline in a batched DoFn,
`hf` runs a Hugging Face token classifier through `RunInference` with a `KeyedModelHandler`
(the key is the segment row, so mentions get their provenance without a join). Both write
ENTITY_MENTIONS rows. `bare_throughput` times a backend's model alone, without Beam.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import apache_beam as beam
from apache_beam.io import parquetio
from apache_beam.ml.inference.base import KeyedModelHandler, PredictionResult, RunInference

from pipelines.options import NerBackendConfig, run_stage
from pipelines.stage_input import ReadStageInput
from schemas.tables import ENTITY_MENTIONS
from transforms.hf_ner import HfNerModelHandler
from transforms.ner import NER_COMPONENTS, SPACY_BACKEND, SpacyNerDoFn, span_mentions
from transforms.spacy_models import load_spacy


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: NerBackendConfig
) -> beam.PCollection:
    """Add NER to `p`: read segments, batch, extract mentions, write sharded Parquet."""
    segments = p | "ReadSegments" >> ReadStageInput(input_pattern)
    if cfg.backend == SPACY_BACKEND:
        mentions = (
            segments
            | "Batch"
            >> beam.BatchElements(
                min_batch_size=cfg.min_batch_size, max_batch_size=cfg.max_batch_size
            )
            | "SpacyNer" >> beam.ParDo(SpacyNerDoFn(cfg.model, cfg.max_batch_size))
        )
    else:
        mentions = (
            segments
            | "KeyBySegment" >> beam.Map(_keyed_text)
            | "HfNer" >> RunInference(KeyedModelHandler(hf_handler(cfg)))
            | "MentionRows" >> beam.FlatMap(_keyed_mentions)
        )
    mentions | "WriteMentions" >> parquetio.WriteToParquet(
        output_prefix, ENTITY_MENTIONS, file_name_suffix=".parquet"
    )
    return mentions


def hf_handler(cfg: NerBackendConfig) -> HfNerModelHandler:
    """The model handler of an `hf` NER configuration."""
    return HfNerModelHandler(
        cfg.model,
        device=cfg.device,
        min_batch_size=cfg.min_batch_size,
        max_batch_size=cfg.max_batch_size,
        max_length=cfg.max_length,
        stride=cfg.stride,
    )


def _keyed_text(segment: dict[str, Any]) -> tuple[dict[str, Any], str]:
    return segment, segment["text"]


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


def run(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, NerBackendConfig)


if __name__ == "__main__":
    run()
