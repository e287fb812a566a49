"""Building a collection in-process through Dagster, stage by stage, as the UI would.

Each stage is materialised as its own run of the same asset definitions the UI shows,
in lineage order, against the workspace's Dagster instance, so CLI builds appear in the
UI's run history and partitions. Running stage by stage lets the CLI show progress and
stop at the first failing stage or blocking contract check.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg

from dagster_project.automation.fingerprints import inputs_fingerprint, record_built
from dagster_project.automation.jobs import BUILD_GROUPS
from dagster_project.metadata_keys import SKIP_REASON
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from dagster_project.stage_events import StageSummary, listening
from pipelines import llm_triplets
from stores.workspace import Workspace, check_collection_name

if TYPE_CHECKING:
    from dagster._utils.error import SerializableErrorInfo

LLM_STAGE_KEY = dg.AssetKey(llm_triplets.STAGE)
NOT_RUN = {SKIP_REASON: llm_triplets.NO_BACKEND}
"""The LLM stage's summary in a build without a backend (the stage is left out)."""
QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""Dagster's console logger prints a failed step's whole traceback chain (hundreds of
lines) to stderr: kept off the terminal; `_failure_message` puts it in the log file."""


INTERRUPTED_ERROR = "DagsterExecutionInterruptedError"
"""The error a step fails with when Dagster acts on a captured SIGINT or SIGTERM."""


class BuildFailed(RuntimeError):
    """A stage failed or its blocking contract check did not pass."""


INSTANCE_CONFIG: dict[str, Any] = {
    "telemetry": {"enabled": False},
    "nux": {"enabled": False},  # the UI's community sign-up modal: not for a local tool
    "concurrency": {"pools": {"granularity": "run"}},
}
"""What kgmem sets in its workspace instance's dagster.yaml (or a new one) when the file does
not set it; a `$DAGSTER_HOME` of the user's own with a dagster.yaml is left as it is.

Pools are enforced per run (the UI's run queue holds back a run whose pool is full), not
per step inside a run: Dagster's step-level claims on SQLite storage race across processes
(a slot freed between another process's "any slot free?" check and its queueing leaves that
step waiting forever), and in-process CLI builds and backfill workers bound their LLM
stages with `automation.slots` instead."""


def ensure_instance_config(path: Path) -> None:
    """Add to the instance config at `path` each `INSTANCE_CONFIG` key it lacks."""
    import yaml

    current = (yaml.safe_load(path.read_text()) if path.exists() else None) or {}
    missing = {k: v for k, v in INSTANCE_CONFIG.items() if k not in current}
    if missing:
        path.write_text(yaml.safe_dump({**current, **missing}, sort_keys=False))


def prepare_instance(workspace: Workspace) -> dg.DagsterInstance:
    """The workspace's Dagster instance (DAGSTER_HOME under it unless set), telemetry off.

    Opening an instance creates its SQLite storages on first use, and two processes doing
    that at once race (`table secondary_indexes already exists`); so the instance is opened
    and its storages created under an exclusive lock on `<DAGSTER_HOME>/.kgmem-init.lock`,
    which concurrent builds into one fresh home take in turn."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(workspace.dagster_home)))
    home.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    with open(home / ".kgmem-init.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if home == workspace.dagster_home or not (home / "dagster.yaml").exists():
            ensure_instance_config(home / "dagster.yaml")  # never rewrite a user's own
        instance = dg.DagsterInstance.get()
        instance.get_runs(limit=1)  # creates the run, event log and schedule storages
        instance.event_log_storage.get_concurrency_keys()
        instance.get_dynamic_partitions(collections_partitions.name)
    return instance


def stage_order(defs: dg.Definitions) -> list[dg.AssetKey]:
    """Keys of the build stages of `defs` (the assets of `BUILD_GROUPS`), in lineage order;
    evaluations are jobs of their own (`automation.jobs`)."""
    graph = defs.resolve_asset_graph()
    return [key for key in graph.toposorted_asset_keys if graph.get(key).group_name in BUILD_GROUPS]


def build_collection(
    collection: str,
    inputs: Sequence[str],
    workspace: Workspace,
    defs: dg.Definitions,
    settings: PipelineSettings | None = None,
    on_stage: Callable[[str, StageSummary | None], None] = lambda stage, summary: None,
    stage_guard: Callable[[dg.AssetKey], AbstractContextManager[object] | None] | None = None,
) -> list[StageSummary]:
    """Register `collection` with its `inputs` and materialise every stage for it.

    The stages run in lineage order in one Dagster run, in process, as the build job would
    run them; a stage for which `stage_guard(key)` gives a context (a backfill's LLM slot
    around the stages of the "llm" pool) runs in a run of its own inside it, so the run
    sequence is split around it. With the DaskRunner and no scheduler named, one
    LocalCluster serves every stage of the build (`BuildSettings.dask_cluster`) and is
    closed when the build ends. `on_stage(stage, None)` is called when a stage starts and
    `on_stage(stage, summary)` when it ends (`dagster_project.stage_events`). Raises
    BuildFailed naming the stage that failed or whose blocking check did not pass. A
    completed build records the fingerprint its inputs had when it started (what the
    nightly schedule and resumed backfills compare with). A workspace with a data URL has
    it checked (one-line error when unreachable) and recorded before the first stage.
    """
    check_collection_name(collection)
    missing = [p for p in inputs if not Path(p).exists()]
    if missing:
        raise FileNotFoundError(f"input path(s) not found: {', '.join(missing)}")
    fingerprint = inputs_fingerprint(inputs)
    workspace.record_data_url()  # so the stages' `Workspace.at(root)` find the data
    instance = prepare_instance(workspace)
    warehouse = WarehouseResource(root=str(workspace.root))
    warehouse.register_collection(collection, [str(Path(p).resolve()) for p in inputs])
    instance.add_dynamic_partitions(collections_partitions.name, [collection])
    summaries: list[StageSummary] = []

    def heard(stage: str, summary: StageSummary | None) -> None:
        if summary is not None:
            summaries.append(summary)
        on_stage(stage, summary)

    assets = list(defs.assets or [])
    with (settings or PipelineSettings()).dask_cluster() as running:
        resources = {"warehouse": warehouse, "settings": running}
        for keys, guard in _runs(stage_order(defs), stage_guard, running.llm_enabled):
            if not keys:  # the LLM stage without a backend: reported, not materialised
                heard(llm_triplets.STAGE, StageSummary.of(llm_triplets.STAGE, NOT_RUN, {}))
                continue
            with guard or nullcontext(), listening(heard):
                result = dg.materialize(
                    assets,
                    selection=keys,
                    partition_key=collection,
                    instance=instance,
                    resources=resources,
                    run_config=QUIET_LOGS,
                    raise_on_error=False,
                    tags={"kgmem/collection": collection},
                )
            failed_checks = [name for s in summaries for name, ok in s.checks.items() if not ok]
            if _interrupted(result):
                raise KeyboardInterrupt  # Ctrl-C or SIGTERM, which Dagster turned into a failure
            if not result.success or failed_checks:
                raise BuildFailed(_failure_message(result, failed_checks, summaries))
    record_built(warehouse, collection, fingerprint)
    return summaries


def _runs(
    keys: list[dg.AssetKey],
    guard_of: Callable[[dg.AssetKey], AbstractContextManager[object] | None] | None,
    llm_enabled: bool = True,
) -> list[tuple[list[dg.AssetKey], AbstractContextManager[object] | None]]:
    """`keys` cut into runs: consecutive unguarded stages together, a guarded one alone
    with its guard. Without an LLM backend the LLM stage is no run but an empty one in its
    place: it is left out, so the UI does not show it materialised by a build that never
    ran it (issue 37, 3.12), and the build reports it skipped with the reason, in order."""
    runs: list[tuple[list[dg.AssetKey], AbstractContextManager[object] | None]] = []
    for key in keys:
        if key == LLM_STAGE_KEY and not llm_enabled:
            runs.append(([], None))
            continue
        guard = guard_of(key) if guard_of else None
        if guard is None and runs and runs[-1][1] is None and runs[-1][0]:
            runs[-1][0].append(key)
        else:
            runs.append(([key], guard))
    return runs


def evaluate_collection(
    collection: str,
    workspace: Workspace,
    defs: dg.Definitions,
    job: str,
    config: dict[str, dict[str, Any]],
) -> list[str]:
    """Run evaluation job `job` (`automation.jobs`) on the built `collection` with each
    asset's run `config` (asset name -> config), in the workspace's instance; the names of
    its checks that did not pass (a strategy that raised, a recall drop beyond the
    margin). Raises BuildFailed naming the evaluation that failed."""
    job_def = defs.resolve_job_def(job)
    result = dg.materialize(
        list(defs.assets or []),
        selection=sorted(job_def.asset_layer.selected_asset_keys),
        partition_key=collection,
        instance=prepare_instance(workspace),
        resources={
            "warehouse": WarehouseResource(root=str(workspace.root)),
            "settings": PipelineSettings(),
        },
        run_config={**QUIET_LOGS, "ops": {name: {"config": c} for name, c in config.items()}},
        raise_on_error=False,
        tags={"kgmem/collection": collection, "kgmem/job": job},
    )
    if not result.success:
        raise BuildFailed(f"{job}: " + _failure_message(result, [], []))
    return [e.check_name for e in result.get_asset_check_evaluations() if not e.passed]


def _failure_message(
    result: dg.ExecuteInProcessResult, failed_checks: list[str], done: list[StageSummary]
) -> str:
    if failed_checks:
        stage = next(s.stage for s in done if not all(s.checks.values()))
        return f"stage {stage}: blocking contract check(s) failed: {', '.join(failed_checks)}"
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data is not None:
            error = event.step_failure_data.error
            if error is None:
                return f"stage {event.step_key} failed"
            details = error.to_string()
            logging.getLogger(__name__).error("stage %s failed\n%s", event.step_key, details)
            return f"stage {event.step_key} failed: {root_cause(error)}"
    return "build failed: " + ", ".join(str(e.event_type_value) for e in result.all_events[-3:])


def _interrupted(result: dg.ExecuteInProcessResult) -> bool:
    """Whether a step of `result` failed because the process was interrupted."""
    return any(
        event.is_step_failure
        and event.step_failure_data is not None
        and event.step_failure_data.error is not None
        and _innermost(event.step_failure_data.error).cls_name == INTERRUPTED_ERROR
        for event in result.all_events
    )


def _innermost(error: SerializableErrorInfo) -> SerializableErrorInfo:
    """The error at the end of `error`'s chain of causes."""
    while error.cause is not None:
        error = error.cause
    return error


def root_cause(error: SerializableErrorInfo) -> str:
    """The first line of the innermost error `error` was caused by, with its type: what
    went wrong, without Dagster's wrapping ("Error occurred while executing op ...")."""
    error = _innermost(error)
    message = error.message.strip().removeprefix(f"{error.cls_name}:").strip()
    return f"{error.cls_name}: {message.splitlines()[0] if message else '(no message)'}"
