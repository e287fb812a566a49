"""`kgmem build`: materialise every stage of a collection with progress and a summary."""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from kgmem.cli.build_checks import check_models, check_request
from kgmem.cli.build_options import add_build_options, build_overrides, settings_file
from kgmem.cli.common import INTERRUPTED, LOG_FILE, add_data_url, add_home, console, out
from stores.workspace import Workspace
from transforms.progress import Progress as StageProgress
from transforms.progress import read_progress

if TYPE_CHECKING:
    from dagster_project.stage_events import StageSummary


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    build = commands.add_parser("build", help="materialise every stage of a collection")
    build.add_argument("--collection", required=True, help="collection (partition) name")
    build.add_argument("--input", action="append", required=True, help="file or folder; repeatable")
    add_build_options(build)
    add_home(build)
    add_data_url(build)
    return build


def run(args: argparse.Namespace) -> int:
    check_request(args.collection, args.input)  # before Dagster loads: in well under a second
    from dagster_project.resources.settings_file import load_settings

    workspace = Workspace.at(args.home)
    settings = load_settings(workspace.root, build_overrides(args), settings_file(args))
    check_models(settings)
    summaries = build_with_progress(args.collection, args.input, workspace, settings)
    out.print(summary_table(summaries))
    loaded = next((s.metadata for s in summaries if s.stage == "raw_documents"), {})
    if loaded.get("turns_in"):
        out.print(
            f"conversation turns: {loaded['turns_in']} in, {loaded['turns_out']} kept, "
            f"{loaded['turns_quarantined']} quarantined"
        )
    llm = next((s.metadata for s in summaries if s.stage == "llm_triplets"), {})
    if "llm_calls" in llm:
        tokens = llm["prompt_tokens"] + llm["completion_tokens"]
        out.print(f"LLM: {llm['llm_calls']} calls, {llm['cache_hits']} cache hits, {tokens} tokens")
    snapshot = next(s for s in summaries if s.stage == "memory_snapshot").metadata["snapshot_id"]
    data = f", data at {workspace.data_url}" if workspace.data_url else ""
    out.print(f"snapshot: [bold]{snapshot}[/bold]  (workspace {workspace.root}{data})")
    return 0


def build_with_progress(
    collection: str, inputs: Sequence[str], workspace: Workspace, settings: object = None
) -> list:
    """Build with a progress bar; the stage summaries. A failed stage raises BuildFailed
    naming it and its root cause, and the log file that holds the details.

    While a stage runs, its rows done of total (`transforms.progress`) are shown beside its
    name, refreshed twice a second; where stderr is not a terminal (a log file, a pipe),
    a line per stage start and one every `LOG_EVERY_SECONDS` while it counts."""
    from dagster_project.build import BuildFailed, build_collection, stage_order
    from dagster_project.definitions import kgmem_definitions

    defs = kgmem_definitions()

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(f"building {collection}", total=len(stage_order(defs)))
        watcher = StageWatcher(
            lambda stage: workspace.progress_file(collection, stage),
            lambda text: progress.update(task, description=f"{collection}: {text}"),
            None if console.is_terminal else lambda text: console.print(f"{collection}: {text}"),
        )

        def on_stage(stage: str, summary: StageSummary | None) -> None:
            if summary is None:
                watcher.watch(stage)
                if not console.is_terminal:
                    console.print(f"{collection}: {stage} started")
            else:
                watcher.watch(None)
                progress.advance(task)

        try:
            with watcher, stop_on_interrupt():
                return build_collection(collection, inputs, workspace, defs, settings, on_stage)
        except BuildFailed as exc:
            raise BuildFailed(f"{exc} (details in {workspace.root / LOG_FILE})") from exc


LOG_EVERY_SECONDS = 30.0


@contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """Within the block, stop the process within half a second of Ctrl-C (SIGINT) or
    SIGTERM, with one line and exit status `INTERRUPTED`.

    Dagster's in-process run only records the signal (`capture_interrupts`) and acts on it
    between steps, so a long stage ran on for minutes after Ctrl-C; a thread polls that
    record instead. Ending the process mid-stage is safe: a stage killed half way leaves
    nothing that a re-run does not redo (docs/operations.md), as `kgmem bench reliability`
    checks with SIGKILL at every stage."""
    from dagster._utils.interrupts import check_captured_interrupt

    stopped = threading.Event()

    def watch() -> None:
        while not stopped.wait(0.5):
            if check_captured_interrupt():
                console.print("[red]interrupted:[/red] build stopped; a re-run resumes it")
                os._exit(INTERRUPTED)

    thread = threading.Thread(target=watch, name="interrupt-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()


class StageWatcher:
    """A thread that shows the running stage's progress file: `show(text)` on every
    change, and `log(text)` (when given) at most every `LOG_EVERY_SECONDS`."""

    def __init__(
        self,
        progress_file: Callable[[str], Path],
        show: Callable[[str], None],
        log: Callable[[str], None] | None,
        describe: Callable[[StageProgress], str] = StageProgress.describe,
    ) -> None:
        self.progress_file, self.show, self.log = progress_file, show, log
        self.describe = describe
        self.stage: str | None = None
        self.started = time.time()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="stage-progress", daemon=True)

    def watch(self, stage: str | None) -> None:
        self.stage, self.started = stage, time.time()
        if stage:
            self.show(stage)

    def _current(self, stage: str) -> StageProgress | None:
        """The stage's progress, if its file was written since the stage started (an
        earlier run's file is stale: a skipped stage writes none)."""
        path = self.progress_file(stage)
        try:
            fresh = path.stat().st_mtime >= self.started - 1.0
        except OSError:
            return None
        return read_progress(path) if fresh else None

    def __enter__(self) -> StageWatcher:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join()

    def _run(self) -> None:
        shown, logged_at = "", float("-inf")
        while not self.stopped.wait(0.5):
            stage = self.stage
            found = self._current(stage) if stage else None
            if stage is None or found is None:
                continue
            text = f"{stage} {self.describe(found)}"
            if text != shown and stage == self.stage:
                self.show(text)
                shown = text
                if self.log and time.monotonic() - logged_at >= LOG_EVERY_SECONDS:
                    self.log(text)
                    logged_at = time.monotonic()


def summary_table(summaries: Sequence[StageSummary]) -> Table:
    table = Table(title="stage summary")
    for column in ("stage", "rows in", "rows out", "quarantined", "seconds", "status"):
        table.add_column(column, justify="left" if column in {"stage", "status"} else "right")
    for s in summaries:
        checks = ", ".join(f"{name} {'ok' if ok else 'FAILED'}" for name, ok in s.checks.items())
        status = stage_status(s) + (f" ({checks})" if checks else "")
        table.add_row(
            s.stage, str(s.rows_in), str(s.rows_out), str(s.quarantined), f"{s.seconds:.2f}", status
        )
    return table


def stage_status(summary: StageSummary) -> str:
    """ "done", "unchanged" (input as at the last run), or "skipped: REASON" (the stage did
    not run for another reason, e.g. the LLM stage without a backend)."""
    from dagster_project.metadata_keys import SKIP_REASON

    reason = summary.metadata.get(SKIP_REASON)
    if reason:
        return f"skipped: {reason}"
    return "unchanged" if summary.skipped else "done"
