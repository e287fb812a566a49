"""Beam pipeline: segments with their mentions (Parquet) -> gate -> LLM -> triplets.

Writes three things under the output prefix (see `output_paths`): `LLM_TRIPLETS` shards
at the prefix itself, quarantine shards (`LLM_QUARANTINE`) in a `quarantine/` folder
beside them, and `llm_stats.json`, the summed `LLMStats` of the run (calls, cache hits,
tokens, ...), which the asset reads back with `read_outputs`. The three writers end in one
last step (`pipelines.stage_io.end`), so every runner, Dask's included, runs them all.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apache_beam as beam
import pyarrow as pa

from pipelines.launcher import PendingDocuments, run_beam_stage
from pipelines.options import add_runner_arguments, launch
from pipelines.outcome import QuarantineRate, StageOutcome
from pipelines.parquet_io import clear_shards, read_shards
from pipelines.settings import BuildSettings
from pipelines.stage_io import (
    FileSystemsDoFn,
    ReadStageInput,
    WriteShards,
    by_tag,
    end,
    filesystem_options,
    write_atomically,
)
from schemas.llm_outputs import LLM_QUARANTINE, LLM_TRIPLETS
from stores.data_url import delete, join, read_bytes
from stores.stage_inputs import llm_segments
from stores.warehouse import WarehouseStore
from transforms.llm.config import BACKENDS, LLMConfig, LLMStageConfig
from transforms.llm.dofn import QUARANTINE_TAG, ROWS_TAG, STATS_TAG, LLMTripletDoFn
from transforms.llm.gate import DEFAULT_PROMPTS, GateConfig
from transforms.llm.stats import LLMStats, sum_stats


@dataclass(frozen=True)
class OutputPaths:
    """Where one run's triplets, quarantine records and stats go (locations of
    `stores.data_url`: local paths or URLs)."""

    triplets_prefix: str
    quarantine_prefix: str
    stats_path: str


def output_paths(output_prefix: str | Path) -> OutputPaths:
    """The three outputs of a run writing to `output_prefix` (e.g. `.../output/part`)."""
    folder, _, name = str(output_prefix).rpartition("/")
    return OutputPaths(
        str(output_prefix), join(folder, "quarantine", name), join(folder, "llm_stats.json")
    )


class ExtractTriplets(beam.PTransform):
    """Batches of LLM_SEGMENTS rows -> a dict of LLM_TRIPLETS rows (`ROWS_TAG`), quarantine
    records of invalid answers (`QUARANTINE_TAG`) and per-batch call counters
    (`STATS_TAG`): each batch through the gated, cached LLM runner."""

    def __init__(self, cfg: LLMStageConfig) -> None:
        super().__init__()
        self.cfg = cfg

    def expand(self, batches: beam.PCollection) -> dict[str, beam.PCollection]:
        tagged = batches | "LLMTriplets" >> beam.ParDo(LLMTripletDoFn(self.cfg))
        return by_tag(tagged, (ROWS_TAG, QUARANTINE_TAG, STATS_TAG))


class _WriteStats(FileSystemsDoFn):
    """Writes the run's summed stats as JSON to one file; yields its path."""

    def __init__(self, path: str, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.path = path

    def process(self, stats: dict[str, int]) -> Iterator[str]:
        write_atomically(self.path, json.dumps(stats, sort_keys=True).encode())
        yield self.path


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: LLMStageConfig
) -> beam.PCollection:
    """Add LLM extraction to `p`; returns the triplet rows (also written as Parquet)."""
    paths = output_paths(output_prefix)
    read = ReadStageInput(input_pattern, cfg.max_batch_size)
    results = p | "ReadSegments" >> read | "ExtractTriplets" >> ExtractTriplets(cfg)
    shards = read.num_files
    end(
        results[ROWS_TAG]
        | "WriteTriplets" >> WriteShards(str(paths.triplets_prefix), LLM_TRIPLETS, shards),
        results[QUARANTINE_TAG]
        | "WriteQuarantine" >> WriteShards(str(paths.quarantine_prefix), LLM_QUARANTINE, shards),
        results[STATS_TAG]
        | "SumStats" >> beam.CombineGlobally(sum_stats).without_defaults()
        | "WriteStats" >> beam.ParDo(_WriteStats(str(paths.stats_path), filesystem_options(p))),
    )
    return results[ROWS_TAG]


def clear_outputs(output_prefix: str | Path) -> None:
    """Remove the outputs of an earlier run so a re-run never mixes them."""
    paths = output_paths(output_prefix)
    clear_shards(paths.triplets_prefix)
    clear_shards(paths.quarantine_prefix)
    delete([paths.stats_path])


def read_outputs(output_prefix: str | Path) -> tuple[pa.Table, pa.Table, LLMStats]:
    """(triplets, quarantine rows, stats) of the run that wrote to `output_prefix`."""
    paths = output_paths(output_prefix)
    stats = read_bytes(paths.stats_path)  # none when the run wrote none
    return (
        read_shards(paths.triplets_prefix, LLM_TRIPLETS),
        read_shards(paths.quarantine_prefix, LLM_QUARANTINE),
        LLMStats.from_dict(json.loads(stats)) if stats is not None else LLMStats(),
    )


def _prompt_overrides(values: Sequence[str]) -> dict[str, tuple[str, ...]]:
    prompts = dict(DEFAULT_PROMPTS)
    for value in values:
        kind, _, version_ids = value.partition("=")
        prompts[kind] = tuple(v for v in version_ids.split(",") if v)
    return prompts


STAGE = "llm_triplets"
NO_BACKEND = "no LLM backend (--llm BACKEND turns the stage on)"
"""Why the stage does not run without a backend (`kgmem build` leaves it out of the run)."""


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """LLM triplets of the segments the gate lets through, for the documents NER has
    processed and this stage has not; skipped when no LLM backend is configured. The
    share of answers quarantined is weighed by the stage's quarantine-rate check."""
    cfg = settings.llm_stage(str(warehouse.workspace.root / "llm_cache.duckdb"))
    if cfg is None:
        return StageOutcome(
            rows_in=0,
            rows_out=0,
            skipped=True,
            skip_reason=NO_BACKEND,
            details={"llm": "none"},
            quarantine_rate=QuarantineRate(0, 0, settings.max_quarantine_rate),
        )
    pending = PendingDocuments.of(warehouse, collection, STAGE, "entity_mentions")
    segments = llm_segments(warehouse, collection, pending.todo)
    output_prefix = join(warehouse.workspace.parquet_dir(collection, STAGE), "output", "part")
    clear_outputs(output_prefix)
    triplets = run_beam_stage(
        warehouse=warehouse,
        settings=settings,
        collection=collection,
        stage=STAGE,
        pending=pending,
        inputs=segments,
        build=lambda p, i, o, _: build(p, i, o, cfg),
        output_schema=LLM_TRIPLETS,
    )
    _, rejected, stats = read_outputs(output_prefix)
    quarantined = warehouse.replace_document_quarantine(
        collection, STAGE, rejected.to_pylist(), [*pending.todo, *pending.stale]
    )
    return StageOutcome(
        rows_in=segments.num_rows,
        rows_out=triplets.num_rows,
        quarantined=quarantined,
        skipped=not pending.todo and not pending.stale,
        details={
            "llm_calls": stats.llm_calls,
            "cache_hits": stats.cache_hits,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "gated_out": stats.segments_gated_out,
            "llm_stats": stats.as_dict(),
        },
        quarantine_rate=QuarantineRate(
            triplets.num_rows, quarantined, settings.max_quarantine_rate
        ),
    )


def main(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command line: `--input GLOB --output PREFIX --cache DB [--backend B] [--model M]
    [--base-url URL] [--prompt KIND=NAME/vN,...] [...] [--runner R] [any Beam flag]`;
    with `test_pipeline`, only build onto it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", required=True, help="glob of LLM_SEGMENTS Parquet files")
    parser.add_argument("--output", required=True, help="prefix of the output shards")
    parser.add_argument("--cache", required=True, help="DuckDB file of the LLM call cache")
    parser.add_argument("--backend", choices=BACKENDS, help="default: $KGMEM_LLM_BACKEND")
    parser.add_argument("--model", help="GGUF path, served model name or HF id/path")
    parser.add_argument("--base-url", help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument(
        "--prompt",
        action="append",
        default=[],
        help="KIND=NAME/vN[,NAME/vN]: prompts for a segment kind ('KIND=' sends none)",
    )
    parser.add_argument("--max-calls-per-segment", type=int, default=1)
    parser.add_argument("--max-concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per attempt")
    parser.add_argument("--threads", type=int, help="llama.cpp threads")
    parser.add_argument("--no-grammar", action="store_true", help="llama.cpp: no JSON grammar")
    add_runner_arguments(parser)
    args, beam_flags = parser.parse_known_args(argv)
    cfg = LLMStageConfig(
        cache_path=args.cache,
        llm=LLMConfig(
            backend=args.backend,
            model=args.model,
            base_url=args.base_url,
            max_concurrency=args.max_concurrency,
            timeout_s=args.timeout,
            n_threads=args.threads,
            grammar=not args.no_grammar,
        ).resolve_from_env(),
        gate=GateConfig(
            prompts=_prompt_overrides(args.prompt),
            max_calls_per_segment=args.max_calls_per_segment,
        ),
    )
    launch(build, args, cfg, beam_flags, test_pipeline)


if __name__ == "__main__":
    main()
