"""Progress of `kgmem eval retrieval` while its evaluation runs: strategy i of n, questions
done of total and the time elapsed, like a build's (`build_cmd.StageWatcher` polling the
progress file that the `retrieval_evaluation` asset counts in): one line on a terminal,
a line every 30 s otherwise.

The file counts (strategy, question) pairs in the order they are asked: every strategy
in turn on one question, then the next question. So the pairs done tell the questions
done (of all the strategies); with `--jobs` the processes count into the same file."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from kgmem.cli.build_cmd import StageWatcher
from kgmem.cli.common import console
from stores.workspace import Workspace
from transforms.progress import Progress as StageProgress

STAGE = "retrieval_evaluation"


def describe(strategies: Sequence[str], jobs: int, started: float, found: StageProgress) -> str:
    """`strategy i/n NAME, q/Q questions, elapsed 1m05s` of the pairs done in `found`
    (with several jobs, `n strategies in J processes` instead of one strategy)."""
    count = max(1, len(strategies))
    questions = max(1, found.total // count)
    asked = min(found.done // count, questions)
    minutes, seconds = divmod(int(time.monotonic() - started), 60)
    if jobs > 1:
        running = f"{count} strategies in {jobs} processes"
    else:
        index = found.done % count
        running = f"strategy {index + 1}/{count} {strategies[index]}"
    return f"{running}, {asked:,}/{questions:,} questions, elapsed {minutes}m{seconds:02d}s"


@contextmanager
def evaluation_progress(
    workspace: Workspace, collection: str, strategies: Sequence[str], jobs: int
) -> Iterator[None]:
    """Show the evaluation's progress while the block runs."""
    started = time.monotonic()
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as bar:
        task = bar.add_task(f"evaluating {collection}", total=None)
        watcher = StageWatcher(
            lambda stage: workspace.progress_file(collection, stage),
            lambda text: bar.update(task, description=f"{collection}: {text}"),
            None if console.is_terminal else lambda text: console.print(f"{collection}: {text}"),
            lambda found: describe(strategies, jobs, started, found),
        )
        with watcher:
            watcher.watch(STAGE)
            yield
