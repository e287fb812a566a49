"""Beam runner scaling: the per-segment Beam stages on the in-memory DirectRunner and on
Beam's Dask runner with 1, 2, 4, ... worker processes, in one process run.

`kgmem bench runners --workers 1,2,4 --documents N` generates a collection of N documents
(`benchmarks.corpus_generator`, with its conversation logs), segments it as a build does,
and runs the three stages that run a model over every extractable segment (chunks and
turns), in build order, through the build's own launcher (`pipelines.launcher.launch`:
Parquet shards in, the Beam pipeline, Parquet shards out): NER (`entity_mentions`), noun
phrases (`segment_phrases`) and relation candidates (`relation_candidates`, on the
segments joined with the NER output). The baseline is the build's default runner, the
in-memory DirectRunner, in this process; each Dask configuration gets a fresh
`LocalCluster` of that many worker processes (one thread each, as a build starts it),
closed afterwards.

Each runner does the three stages twice: a cold pass, in which every worker loads its
models at first use (as a build's first pass does; the baseline loads them into this
process), then a warm pass with the models loaded. Throughput = extractable segments /
wall seconds of the pass's three stages; each pass is a ratio to the baseline's same
pass. The cluster's start-up (spawning the workers) is timed apart and is not in either
pass. Every pass's output rows are compared with the baseline's (`identical`).

Worker processes beyond the machine's cores cannot make a pass faster: they share the
cores (and each loads its own copy of the models).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.corpus_generator import generate_collection
from pipelines import entity_mentions, relation_candidates, segment_phrases
from pipelines.dask_cluster import local_cluster
from pipelines.launcher import BuildFn, launch
from pipelines.parquet_io import read_shards
from pipelines.relation_candidates import RelationStageConfig
from pipelines.runner_modes import DASK_RUNNER, DEFAULT_RUNNER
from pipelines.settings import BuildSettings
from schemas.tables import (
    ENTITY_MENTIONS,
    EXTRACTABLE_KINDS,
    RELATION_CANDIDATES,
    SEGMENT_PHRASES,
    SEGMENTS,
)
from stores.stage_inputs import join_mentions
from transforms.loaders import load_inputs
from transforms.progress import stage_progress_file
from transforms.segmenting import segment_documents

COLLECTION = "bench"
PASSES = ("cold", "warm")


@dataclass
class RunnerRun:
    """One runner's two passes over the segments: seconds, segments/s, ratio to the
    baseline's same pass, and whether its outputs equal the baseline's."""

    runner: str
    workers: int
    cluster_start_s: float
    seconds: dict[str, float]
    per_s: dict[str, float]
    ratio: dict[str, float]
    identical: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ScalingResult:
    """Everything `kgmem bench runners` prints and writes."""

    documents: int
    segments: int
    cpus: int
    runs: list[RunnerRun]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "runs": [r.as_dict() for r in self.runs]}


def parse_workers(text: str) -> list[int]:
    """`1,2,4` -> [1, 2, 4]: worker counts, each at least 1, no repeats."""
    return distinct_counts(text, "--workers")


def distinct_counts(text: str, flag: str) -> list[int]:
    """The comma-separated counts of option `flag`, in order: each at least 1, no repeats;
    a ValueError naming `flag` otherwise."""
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise ValueError(f"{flag} takes comma-separated integers, not {text!r}") from exc
    if not counts or min(counts) < 1 or len(set(counts)) != len(counts):
        raise ValueError(f"{flag} needs distinct counts of at least 1, not {text!r}")
    return counts


def generated_segments(folder: Path, documents: int, seed: int = 0) -> pa.Table:
    """The extractable segments (chunks and turns) of a generated collection of
    `documents` documents written under `folder`, segmented as a build segments them."""
    paths = generate_collection(folder, documents, seed)
    loaded = load_inputs(COLLECTION, paths)
    segments = segment_documents(loaded.documents).segments
    return pa.Table.from_pylist(
        [s for s in segments if s["kind"] in EXTRACTABLE_KINDS], schema=SEGMENTS
    )


def run_stages(segments: pa.Table, settings: BuildSettings, work: Path) -> dict[str, list]:
    """NER, phrases and relation candidates over `segments` with `settings`, as a build
    launches them; their output rows, sorted."""
    spacy = settings.spacy_stage()

    def stage(build: BuildFn, rows: pa.Table, name: str, config: object) -> str:
        folder = work / name
        return launch(build, rows, str(folder), stage_progress_file(folder), settings, config)

    ner = stage(entity_mentions.build, segments, "ner", settings.ner_stage())
    mentions = read_shards(ner, ENTITY_MENTIONS)
    phrases = stage(segment_phrases.build, segments, "phrases", spacy)
    pairs = join_mentions(segments, mentions, COLLECTION)
    candidates = stage(relation_candidates.build, pairs, "relations", RelationStageConfig(spacy))
    outputs = {
        "entity_mentions": mentions,
        "segment_phrases": read_shards(phrases, SEGMENT_PHRASES),
        "relation_candidates": read_shards(candidates, RELATION_CANDIDATES),
    }
    return {name: sorted(map(repr, table.to_pylist())) for name, table in outputs.items()}


def _passes(
    segments: pa.Table, settings: BuildSettings, work: Path
) -> tuple[dict[str, float], list[dict[str, list]]]:
    seconds, outputs = {}, []
    for name in PASSES:
        started = time.perf_counter()
        outputs.append(run_stages(segments, settings, work / name))
        seconds[name] = time.perf_counter() - started
    return seconds, outputs


def run(
    workers: list[int],
    documents: int,
    seed: int = 0,
    work: Path | None = None,
    on_step: Callable[[str], None] = lambda step: None,
) -> ScalingResult:
    """The baseline and one Dask run per worker count, in this process (`work`: where the
    collection and the stage files go, default a temporary folder removed afterwards)."""
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        root = Path(tmp)
        on_step(f"generating and segmenting {documents:,} documents")
        segments = generated_segments(root / "corpus", documents, seed)
        count = segments.num_rows
        on_step(f"baseline: in-memory DirectRunner, {count:,} segments")
        base_seconds, base_outputs = _passes(segments, BuildSettings(), root / "direct")
        baseline = RunnerRun(
            DEFAULT_RUNNER, 1, 0.0, base_seconds,
            {p: count / s for p, s in base_seconds.items()},
            dict.fromkeys(PASSES, 1.0), base_outputs[1] == base_outputs[0],
        )  # fmt: skip
        runs = [baseline]
        for n in workers:
            on_step(f"DaskRunner, LocalCluster of {n} worker processes")
            started = time.perf_counter()
            with local_cluster(n) as address:
                start_s = time.perf_counter() - started
                settings = BuildSettings(beam_runner=DASK_RUNNER, dask_address=address)
                seconds, outputs = _passes(segments, settings, root / f"dask{n}")
            per_s = {p: count / s for p, s in seconds.items()}
            runs.append(
                RunnerRun(
                    DASK_RUNNER, n, start_s, seconds, per_s,
                    {p: per_s[p] / baseline.per_s[p] for p in PASSES},
                    all(out == base_outputs[0] for out in outputs),
                )
            )  # fmt: skip
    return ScalingResult(documents, count, os.cpu_count() or 1, runs)
