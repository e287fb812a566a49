"""`kgmem eval retrieval --jobs N`: an evaluation's strategies split over N processes.

Each process opens the same snapshot (`Memory.open` with its id) and runs
`memory.evaluation.retrieval_scores` on its share of the strategies, over every question;
the shares are dealt round-robin in the order given, so the slow graph strategies spread
over the processes. Rows, traces and errors come back in the order the strategies were
given, so the figures are those of one process. Processes are started by spawning, not
forking: the parent holds LanceDB's and the encoders' threads, which a fork would copy
without their owners.

Each process gets its share of the cores for its thread pools (OpenBLAS, and the packaged
second encoder's OpenMP team): cores // N, at least one. With every process's pools at
the whole machine's width, their threads, which spin a while after each call before they
sleep, took the cores the other processes' work needed: on 2 cores, LoCoMo dev, every
strategy, `--jobs 2` took 561 s where one process took 250 s. The figures are the same:
a query's products run on one BLAS thread, in fixed lanes (`transforms.cpu_lanes`), which
run one after the other where a process has one thread.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from memory.evaluation import Reranking, RetrievalRun, retrieval_scores
from memory.memory import Memory
from transforms.embedding import ENCODER_THREADS
from transforms.evaluation.retrieval_questions import QuestionSet


def scores_in_processes(
    memory: Memory,
    questions: QuestionSet,
    strategies: Sequence[str],
    reranking: Reranking | None,
    options: Mapping[str, Any] | None,
    session_unit: bool,
    progress: Path | None,
    jobs: int,
) -> RetrievalRun:
    """`retrieval_scores` of `strategies`, their shares run in `jobs` processes at once."""
    home = memory._view.home
    if home is None:
        raise ValueError("--jobs needs a snapshot opened from a workspace folder")
    shares = [list(strategies[i::jobs]) for i in range(min(jobs, len(strategies)))]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(len(shares), mp_context=context) as pool:
        futures = [
            pool.submit(
                _share,
                str(home),
                memory.snapshot.snapshot_id,
                questions,
                share,
                reranking,
                dict(options or {}),
                session_unit,
                progress,
                threads_per_job(len(shares)),
            )
            for share in shares
        ]
        parts = [future.result() for future in futures]
    return _merged(parts, strategies)


def _share(
    home: str,
    snapshot_id: str,
    questions: QuestionSet,
    strategies: list[str],
    reranking: Reranking | None,
    options: dict[str, Any],
    session_unit: bool,
    progress: Path | None,
    threads: int,
) -> RetrievalRun:
    """One process's share: the snapshot opened here, its strategies scored, its thread
    pools `threads` wide."""
    ENCODER_THREADS.set(threads)
    with threadpool_limits(limits=threads), Memory.open(home, snapshot=snapshot_id) as memory:
        return retrieval_scores(
            memory, questions, strategies, reranking, options, session_unit, progress
        )


def threads_per_job(jobs: int) -> int:
    """Threads each of `jobs` processes' pools may use: its share of the cores, at least 1."""
    return max(1, (os.cpu_count() or 1) // jobs)


def _merged(parts: list[RetrievalRun], strategies: Sequence[str]) -> RetrievalRun:
    """The processes' runs as one, rows, traces and errors in the order of `strategies`."""
    order = {strategy: index for index, strategy in enumerate(strategies)}
    run = RetrievalRun()
    rows = [row for part in parts for row in part.rows]
    run.rows = sorted(rows, key=lambda row: order[str(row["strategy"])])
    traces = {s: t for part in parts for s, t in part.traces.items()}
    errors = {s: e for part in parts for s, e in part.errors.items()}
    run.traces = {s: traces[s] for s in strategies if s in traces}
    run.errors = {s: errors[s] for s in strategies if s in errors}
    return run
