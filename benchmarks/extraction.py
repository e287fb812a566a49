"""Extraction throughput: each backend in its Beam stage next to the bare model alone.

Every figure comes from one process on the same segments (the bundled sample corpus's
chunks and turns, repeated with fresh ids up to `segments`): the stage as a build runs it
(Beam DirectRunner, Parquet in and out, model loading included) and the bare model on the
same texts (no Beam, loading and a warm-up batch not timed). The ratio stage/bare is the
cost of the pipeline around the model.

The bare timings (`bare_parse`, `bare_encode`, `bare_classify`, with
`pipelines.entity_mentions.bare_throughput` for NER) are shared with `kgmem bench build`
(`benchmarks.build_cost`), which runs them on a built collection's own segments.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines import entity_mentions, relation_candidates
from pipelines.options import NerBackendConfig, pipeline_options
from pipelines.relation_candidates import RelationStageConfig
from schemas.tables import EXTRACTABLE_KINDS, SEGMENT_WITH_MENTIONS, SEGMENTS
from transforms.embedding import DEFAULT_ENCODER, encode
from transforms.loaders import load_inputs
from transforms.ner import NER_COMPONENTS, extract_mentions
from transforms.ner_backends import DEFAULT_SPACY_MODEL
from transforms.relation_classifier.candidates import (
    ClassifierConfig,
    classify_segments,
    load_backend,
)
from transforms.relations import PARSE_COMPONENTS
from transforms.segmenting import segment_documents
from transforms.spacy_models import load_spacy

SAMPLE = Path(__file__).resolve().parent.parent / "sample_corpus"


@dataclass(frozen=True)
class Throughput:
    """Segments per second of one backend in its stage and alone."""

    backend: str
    segments: int
    stage_per_s: float
    bare_per_s: float

    @property
    def ratio(self) -> float:
        return self.stage_per_s / self.bare_per_s if self.bare_per_s else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": round(self.ratio, 3)}


def sample_segments(count: int) -> list[dict[str, Any]]:
    """`count` extractable segments of the sample corpus with their spaCy mentions."""
    loaded = load_inputs("bench", [SAMPLE / "documents", SAMPLE / "conversations"])
    base = [
        s for s in segment_documents(loaded.documents).segments if s["kind"] in EXTRACTABLE_KINDS
    ]
    nlp = load_spacy(DEFAULT_SPACY_MODEL, NER_COMPONENTS)
    mentions: dict[str, list[dict[str, Any]]] = {}
    for m in extract_mentions(nlp, base, DEFAULT_SPACY_MODEL):
        mentions.setdefault(m["segment_id"], []).append(m)
    rows = []
    for i in range(count):
        segment = dict(base[i % len(base)])
        segment["mentions"] = mentions.get(segment["segment_id"], [])
        segment["segment_id"] = f"{segment['segment_id']}-{i}"
        segment["context_device"] = None
        rows.append(segment)
    return rows


def _stage_seconds(build: Callable[..., Any], rows: pa.Table, cfg: object) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        pq.write_table(rows, Path(tmp) / "in.parquet")
        started = time.perf_counter()
        with beam.Pipeline(options=pipeline_options()) as p:
            build(p, str(Path(tmp) / "in.parquet"), str(Path(tmp) / "out" / "part"), cfg)
        return time.perf_counter() - started


def bare_parse(texts: list[str], batch_size: int = 64, model: str = DEFAULT_SPACY_MODEL) -> float:
    """Segments per second of the spaCy parse the dependency patterns need, alone (loading
    and a warm-up batch not timed)."""
    nlp = load_spacy(model, PARSE_COMPONENTS)
    list(nlp.pipe(texts[:batch_size], batch_size=batch_size))
    started = time.perf_counter()
    list(nlp.pipe(texts, batch_size=batch_size))
    return len(texts) / (time.perf_counter() - started)


def bare_encode(texts: list[str], model: str = DEFAULT_ENCODER, batch_size: int = 64) -> float:
    """Segments per second of the sentence encoder alone on `texts` (loading and a warm-up
    batch not timed)."""
    encode(texts[:batch_size], model, batch_size)
    started = time.perf_counter()
    encode(texts, model, batch_size)
    return len(texts) / (time.perf_counter() - started)


def bare_classify(rows: list[dict[str, Any]], cfg: ClassifierConfig) -> float:
    """Segments per second of the relation classifier alone on `rows` (SEGMENT_WITH_MENTIONS
    rows), in the stage's batches: pairing, features and probe; loading and a warm-up batch
    not timed."""
    backend = load_backend(cfg)
    size = cfg.max_batch_size
    batches = [rows[i : i + size] for i in range(0, len(rows), size)]
    list(classify_segments(backend, batches[0], cfg.window, cfg.min_confidence))
    started = time.perf_counter()
    for batch in batches:
        list(classify_segments(backend, batch, cfg.window, cfg.min_confidence))
    return len(rows) / (time.perf_counter() - started)


def ner_throughput(rows: list[dict[str, Any]], cfg: NerBackendConfig) -> Throughput:
    table = pa.Table.from_pylist(rows, schema=SEGMENTS)
    seconds = _stage_seconds(entity_mentions.build, table, cfg)
    bare = entity_mentions.bare_throughput(cfg, [r["text"] for r in rows])
    return Throughput(f"ner:{cfg.model_tag}", len(rows), len(rows) / seconds, bare)


def relation_throughput(rows: list[dict[str, Any]]) -> Throughput:
    table = pa.Table.from_pylist(rows, schema=SEGMENT_WITH_MENTIONS)
    seconds = _stage_seconds(relation_candidates.build, table, RelationStageConfig())
    bare = bare_parse([r["text"] for r in rows])
    return Throughput("relations:dep_patterns", len(rows), len(rows) / seconds, bare)


def llm_throughput(rows: list[dict[str, Any]], cache_dir: Path) -> Throughput:
    """The LLM step (gate, cache miss, call, validation, entity matching) against the
    backend's raw completions of the same requests."""
    from transforms.llm.batch import LLMExtractor
    from transforms.llm.config import LLMConfig, LLMStageConfig
    from transforms.llm.gate import GateConfig, plan_calls
    from transforms.llm.prompts import REAL_ATOMIC_FACTS_V1

    gate = GateConfig(prompts={"chunk": (REAL_ATOMIC_FACTS_V1.version_id,)}, min_entities=2)
    cfg = LLMStageConfig(str(cache_dir / "llm_cache.duckdb"), LLMConfig(), gate)
    segments = [{**r, "turns": None} for r in rows if r["kind"] == "chunk"]
    extractor = LLMExtractor.from_config(cfg)
    started = time.perf_counter()
    result = extractor.extract_batch(segments)
    stage = time.perf_counter() - started
    backend = extractor.runner.backend
    calls = plan_calls(segments, gate).calls
    started = time.perf_counter()
    for call in calls:
        backend.complete(call.request, timeout_s=cfg.llm.timeout_s)
    bare = time.perf_counter() - started
    called = max(result.stats.requests, 1)
    return Throughput(
        f"llm:{backend.name}:{backend.model}", called, called / stage, len(calls) / bare
    )


def run(segments: int = 400, llm_segments: int = 0) -> list[Throughput]:
    """Throughput of spaCy NER, the dependency extractor and (optionally) the LLM."""
    rows = sample_segments(segments)
    results = [
        ner_throughput(rows, NerBackendConfig()),
        relation_throughput(rows),
    ]
    if llm_segments:
        with tempfile.TemporaryDirectory() as tmp:
            results.append(llm_throughput(sample_segments(llm_segments), Path(tmp)))
    return results
