"""Backfill scaling: the wall time of building the same collections one partition at a time
against several at once (`kgmem bench backfill`).

`partitions` collections of `documents` generated documents each (seeds `seed`,
`seed + 1`, ...: distinct entities and texts) are registered in a fresh workspace per
concurrency level and backfilled there with `run_backfill(max_concurrent=c)`, the LLM stage
off, so every level builds everything from the same cold start: an empty warehouse and an
empty embedding cache. The ratio is a level's wall time over the first level's (the
baseline, measured in the same run); the snapshots' content hashes must be the same at
every level, collection by collection, or the run reports them as different.

Levels run in the order given, so the baseline goes first and warms only the operating
system's file cache (the model files), which favours the later levels by a second or so;
on a machine with fewer cores than workers the levels compete for the same cores, which
the figures show rather than hide.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpus_generator import generate_collection
from benchmarks.runner_scaling import distinct_counts
from stores.workspace import Workspace

BENCH_DIR = "bench_backfill"


@dataclass(frozen=True)
class Level:
    """One concurrency level: its wall time and each partition's outcome."""

    max_concurrent: int
    seconds: float
    partitions: list[dict[str, Any]]
    content_hashes: dict[str, str]

    @property
    def failed(self) -> list[str]:
        return [p["collection"] for p in self.partitions if p["status"] != "built"]


@dataclass(frozen=True)
class BackfillScaling:
    """Every level of one run, the first being the baseline of the ratios."""

    partitions: int
    documents: int
    levels: list[Level]

    @property
    def ratios(self) -> dict[int, float]:
        """Wall time of each level over the baseline's (below 1: faster)."""
        base = self.levels[0].seconds
        return {lv.max_concurrent: round(lv.seconds / base, 3) for lv in self.levels}

    @property
    def identical(self) -> bool:
        """Whether every level built every collection into the same snapshot content."""
        first = self.levels[0].content_hashes
        return bool(first) and all(lv.content_hashes == first for lv in self.levels)

    def as_dict(self) -> dict[str, Any]:
        return {
            "partitions": self.partitions,
            "documents_per_partition": self.documents,
            "levels": [asdict(lv) for lv in self.levels],
            "ratio_to_first_level": self.ratios,
            "identical_snapshots": self.identical,
        }


def parse_levels(text: str) -> list[int]:
    """`1,2` -> [1, 2]: two or more distinct positive concurrency levels, baseline first."""
    levels = distinct_counts(text, "--concurrency")
    if len(levels) < 2:
        raise ValueError(f"--concurrency needs two or more distinct levels >= 1, got {text!r}")
    return levels


def run(
    partitions: int = 4,
    documents: int = 30,
    levels: Sequence[int] = (1, 2),
    home: str | Path | None = None,
    seed: int = 0,
    on_level: Callable[[int], None] = lambda level: None,
    worker_setup: Callable[[], object] | None = None,
) -> BackfillScaling:
    """Generate the collections once, then backfill them at each level in a workspace of
    its own under `<home>/bench_backfill/` (replaced if there)."""
    if partitions < 2:
        raise ValueError("--partitions must be at least 2")
    if documents < 2:
        raise ValueError("--partition-documents must be at least 2")
    root = Workspace.at(home).root / BENCH_DIR
    shutil.rmtree(root, ignore_errors=True)
    corpora = {}
    for i in range(partitions):
        corpora[f"part{i}"] = root / f"corpus-{i}"
        generate_collection(corpora[f"part{i}"], documents, seed + i)
    measured = []
    for level in levels:
        on_level(level)
        folder = root / f"concurrent-{level}"
        measured.append(backfill_level(folder, corpora, level, worker_setup))
    return BackfillScaling(partitions, documents, measured)


def backfill_level(
    folder: Path,
    corpora: dict[str, Path],
    max_concurrent: int,
    worker_setup: Callable[[], object] | None = None,
) -> Level:
    """Register `corpora` (collection -> generated folder) in a new workspace at `folder`
    and time one backfill of them, `max_concurrent` partitions at a time (`worker_setup`:
    see `run_backfill`)."""
    from dagster_project.automation.backfill import run_backfill
    from dagster_project.resources import PipelineSettings, WarehouseResource
    from pipelines.settings import WORKSPACE_CACHE

    workspace = Workspace.at(folder)
    warehouse = WarehouseResource(root=str(workspace.root))
    for name, corpus in corpora.items():
        warehouse.register_collection(
            name, [str(corpus / "documents"), str(corpus / "conversations")]
        )
    # each level's own cold embedding cache, whatever $KGMEM_EMBEDDING_CACHE says
    settings = PipelineSettings(llm_backend="none", embedding_cache=WORKSPACE_CACHE)
    started = time.perf_counter()
    outcomes = run_backfill(
        list(corpora), workspace, settings, max_concurrent, worker_setup=worker_setup
    )
    seconds = time.perf_counter() - started
    rows = warehouse.rows(
        "SELECT collection, content_hash FROM snapshots ORDER BY collection, created_at"
    )
    return Level(
        max_concurrent=max_concurrent,
        seconds=round(seconds, 2),
        partitions=[
            {
                "collection": o.collection,
                "status": o.status,
                "seconds": round(o.seconds, 2),
                "error": o.error,
            }
            for o in outcomes
        ],
        content_hashes={r["collection"]: r["content_hash"] for r in rows},
    )
