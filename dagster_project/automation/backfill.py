"""Backfills: build a set of collection partitions with bounded concurrency, resumably.

Each partition is built by `build.build_collection` (every stage in lineage order, as the CLI
does), so a backfill leaves each collection's memory exactly as building it on its own would.

Resuming: a completed build records its inputs' fingerprint (`fingerprints.record_built`);
a partition whose record matches its current inputs is reported "skipped (done)" and not
touched, so re-running a backfill after a failure only builds what did not finish. Within a
partition that failed half way, the stages' own ledgers skip the documents already done.

Concurrency: `max_concurrent` partitions build at once, each in its own worker process (Beam
and the models are CPU-bound, so threads would not overlap), each worker's model libraries
sized to its share of the cores (`automation.worker_start`). The DuckDB warehouse admits one
writing process at a time: every warehouse access is one short transaction on a connection
that waits for the file lock (`transforms.duckdb_connect`), so transactions of
different partitions are serialized while their Beam and model work overlaps; a partition
only ever writes its own collection's rows, LanceDB tables and Parquet folders. The LLM stage
declares the Dagster pool "llm": its limit (`llm_slots`, set on the instance unless one is
configured) bounds the LLM runs the UI's run queue launches at once, and in a backfill each
worker holds one of `llm_slots` file-lock slots (`automation.slots`, under
`<workspace>/locks/llm`) around the stages of that pool, so at most `llm_slots` LLM stages
run at once across all workers.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date
from typing import Any

import dagster as dg

from dagster_project.automation.days import day_collection, split_by_day
from dagster_project.automation.fingerprints import inputs_fingerprint, last_built
from dagster_project.automation.slots import held_slot
from dagster_project.automation.worker_start import start_worker
from dagster_project.build import build_collection, prepare_instance
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from stores.workspace import Workspace

LLM_POOL = "llm"
BUILT, DONE, FAILED = "built", "skipped (done)", "failed"


@dataclass(frozen=True)
class PartitionOutcome:
    """How one partition of a backfill ended."""

    collection: str
    status: str
    seconds: float = 0.0
    snapshot_id: str | None = None
    error: str | None = None


def ensure_pool_limit(instance: dg.DagsterInstance, pool: str, slots: int) -> int:
    """Limit `pool` to `slots` concurrent steps unless the instance already configures it;
    return the limit in force."""
    storage = instance.event_log_storage
    if pool not in storage.get_concurrency_keys():
        storage.set_concurrency_slots(pool, slots)
    return storage.get_concurrency_info(pool).slot_count


def run_backfill(
    collections: Sequence[str],
    workspace: Workspace,
    settings: PipelineSettings | None = None,
    max_concurrent: int = 1,
    llm_slots: int = 1,
    force: bool = False,
    on_outcome: Callable[[PartitionOutcome], None] = lambda outcome: None,
    worker_setup: Callable[[], object] | None = None,
) -> list[PartitionOutcome]:
    """Build every registered collection of `collections` not already built from its current
    inputs (all of them with `force`); outcomes in the order of `collections`.
    `worker_setup` (picklable) runs first in each worker process, e.g. the CLI's routing of
    library logs, which a spawned process does not inherit."""
    if max_concurrent < 1:
        raise ValueError("max_concurrent must be at least 1")
    settings = settings or PipelineSettings()
    ensure_pool_limit(prepare_instance(workspace), LLM_POOL, llm_slots)
    warehouse = WarehouseResource(root=str(workspace.root))
    outcomes: dict[str, PartitionOutcome] = {}
    todo: list[str] = []
    for name in dict.fromkeys(collections):
        try:
            current = inputs_fingerprint(warehouse.inputs_of(name))
        except (FileNotFoundError, ValueError) as exc:
            outcomes[name] = PartitionOutcome(name, FAILED, error=str(exc))
        else:
            if not force and last_built(warehouse, name) == current:
                outcomes[name] = PartitionOutcome(name, DONE)
            else:
                todo.append(name)
                continue
        on_outcome(outcomes[name])
    built = _build_all(todo, str(workspace.root), settings, max_concurrent, llm_slots, worker_setup)
    for outcome in built:
        outcomes[outcome.collection] = outcome
        on_outcome(outcome)
    return [outcomes[name] for name in dict.fromkeys(collections)]


def _build_all(
    todo: list[str],
    root: str,
    settings: PipelineSettings,
    max_concurrent: int,
    llm_slots: int,
    worker_setup: Callable[[], object] | None,
) -> list[PartitionOutcome]:
    """Outcomes of building `todo`, in completion order."""
    config = settings.model_dump()
    if max_concurrent == 1 or len(todo) <= 1:
        return [build_partition(name, root, config, llm_slots) for name in todo]
    context = multiprocessing.get_context("spawn")
    workers = min(max_concurrent, len(todo))
    threads = max(1, (os.cpu_count() or 1) // workers)
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=start_worker, initargs=(threads, worker_setup)
    ) as pool:
        futures = [pool.submit(build_partition, name, root, config, llm_slots) for name in todo]
        return [future.result() for future in as_completed(futures)]


def build_partition(
    collection: str, root: str, settings: dict[str, Any], llm_slots: int = 1
) -> PartitionOutcome:
    """Build one registered collection from its registered inputs (a worker's job), its
    stages of the "llm" pool each holding one of `llm_slots` slots. Any error ends this
    partition as "failed" with its message; the other partitions go on."""
    from dagster_project.definitions import kgmem_definitions

    defs = kgmem_definitions()

    started = time.perf_counter()
    workspace = Workspace.at(root)
    graph = defs.resolve_asset_graph()

    def llm_slot(key: dg.AssetKey) -> AbstractContextManager[object] | None:
        if LLM_POOL in graph.get(key).pools:
            return held_slot(workspace.root / "locks" / LLM_POOL, llm_slots)
        return None

    try:
        inputs = WarehouseResource(root=root).inputs_of(collection)
        summaries = build_collection(
            collection, inputs, workspace, defs, PipelineSettings(**settings), stage_guard=llm_slot
        )
    except Exception as exc:  # a backfill reports each partition's failure and goes on
        return PartitionOutcome(collection, FAILED, time.perf_counter() - started, error=str(exc))
    snapshot = next(
        (s.metadata.get("snapshot_id") for s in summaries if s.stage == "memory_snapshot"), None
    )
    return PartitionOutcome(collection, BUILT, time.perf_counter() - started, snapshot)


def register_day_partitions(
    workspace: Workspace, base: str, start: date | None = None, end: date | None = None
) -> list[str]:
    """Split registered conversation collection `base` by day (`days.split_by_day`, files
    under `<workspace>/days/<base>/`) and register the day collections in [start, end] in the
    warehouse and as dynamic partitions; return their names, oldest first."""
    warehouse = WarehouseResource(root=str(workspace.root))
    split = split_by_day(base, warehouse.inputs_of(base), workspace.root / "days" / base)
    names = []
    for day, folder in sorted(split.days.items()):
        if (start is None or date.fromisoformat(day) >= start) and (
            end is None or date.fromisoformat(day) <= end
        ):
            name = day_collection(base, day)
            warehouse.register_collection(name, [str(folder)])
            names.append(name)
    prepare_instance(workspace).add_dynamic_partitions(collections_partitions.name, names)
    return names
