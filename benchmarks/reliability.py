"""Reliability: what bad input, killed builds and concurrency do to a workspace.

`kgmem bench reliability` runs four checks and prints their counts:

- **bad inputs**: each kind of `benchmarks.bad_inputs.BAD_INPUTS`, beside a good file,
  through the loader; handled cleanly means no exception, the good file loaded, the bad
  one quarantined with a reason, and records read = documents + records quarantined. Then
  one real build over all of them together must succeed with its counts adding up.
- **kills**: a build of the corpus killed with SIGKILL a moment after a chosen stage
  starts, then run again: the snapshot's content hash must equal a clean build's, with no
  duplicate fact version.
- **concurrent builds**: two builds started together into a fresh workspace, then two more
  into the same, now initialised, one.
- **concurrent queries**: queries from several threads on that workspace, a reader held
  open, while the second two builds write into it; a query that raises counts as failed.

Records lost: for every load and build, records read − documents out − records quarantined.
Every build is the real CLI (`python -m kgmem build`) in a process of its
own, without the LLM stage.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb

from benchmarks.bad_inputs import BAD_INPUTS
from transforms.loaders import load_inputs

GOOD_TEXT = "Acme Corporation opened an office in Leeds in 2021."
KILL_DELAY_S = 1.0
"""How long after a stage starts its build is killed."""


@dataclass
class ReliabilityReport:
    """The counts `kgmem bench reliability` prints (and writes as JSON)."""

    bad_inputs_tried: int = 0
    bad_inputs_handled: int = 0
    kills: int = 0
    identical_reruns: int = 0
    concurrent_queries: int = 0
    failed_queries: int = 0
    concurrent_builds: int = 0
    failed_builds: int = 0
    records_lost: int = 0
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def check_bad_inputs(root: Path, report: ReliabilityReport) -> Path:
    """Load each bad input beside a good file; returns a folder holding all of them (and
    good files) for one real build."""
    together = root / "all_bad"
    together.mkdir(parents=True)
    for number, (kind, write) in enumerate(BAD_INPUTS.items()):
        folder, beside = root / f"bad{number}", together / f"case{number}"
        for place in (folder, beside):
            place.mkdir()
            (place / "good.txt").write_text(f"{GOOD_TEXT} Case {number}.")
        report.bad_inputs_tried += 1
        try:
            bad = write(folder)
            write(beside)
            loaded = load_inputs("bad", [folder])
        except Exception as exc:  # the finding itself: a bad input that raised
            report.problems.append(f"{kind}: raised {type(exc).__name__}: {exc}")
            continue
        lost = loaded.records_read - len(loaded.documents) - loaded.records_quarantined
        report.records_lost += lost
        flagged = any(Path(q.source_file).name == bad.name for q in loaded.quarantined)
        good = any(d["text"].startswith(GOOD_TEXT) for d in loaded.documents)
        if flagged and good and lost == 0:
            report.bad_inputs_handled += 1
        else:
            report.problems.append(f"{kind}: quarantined={flagged} good={good} lost={lost}")
    return together


def build_command(home: Path, collection: str, inputs: Sequence[Path]) -> list[str]:
    """The CLI build of `inputs` as `collection` into `home`, without the LLM stage."""
    paths = [arg for p in inputs for arg in ("--input", str(p))]
    return [
        sys.executable,
        "-m",
        "kgmem",
        "build",
        "--collection",
        collection,
        *paths,
        "--no-llm",
        "--home",
        str(home),
    ]


def run_build(home: Path, collection: str, inputs: Sequence[Path]) -> subprocess.CompletedProcess:
    return subprocess.run(
        build_command(home, collection, inputs), capture_output=True, text=True, check=False
    )


def _one_row(home: Path, sql: str, params: Sequence[object] = ()) -> tuple | None:
    """The first row of a read-only query on `home`'s warehouse."""
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchone()
    finally:
        con.close()


def newest_hash(home: Path, collection: str) -> str | None:
    """Content hash of `collection`'s newest snapshot in `home` (None without one)."""
    row = _one_row(
        home,
        "SELECT content_hash FROM snapshots WHERE collection = ? ORDER BY created_at DESC LIMIT 1",
        [collection],
    )
    return row[0] if row else None


def build_records_lost(home: Path, collection: str, inputs: Sequence[Path]) -> int:
    """Records the build of `inputs` lost: records the loader reads from them, less the
    documents and record-level quarantine rows the build stored."""
    read = load_inputs(collection, inputs).records_read
    (documents,) = _one_row(
        home, "SELECT count(*) FROM documents WHERE collection = ?", [collection]
    )
    (quarantined,) = _one_row(
        home,
        "SELECT count(*) FROM quarantine WHERE collection = ? AND stage = 'raw_documents' "
        "AND record_ref NOT LIKE '% turn %' AND record_ref NOT LIKE '% session %'",
        [collection],
    )
    return read - int(documents) - int(quarantined)


def check_bad_build(root: Path, folder: Path, report: ReliabilityReport) -> None:
    """One real build over every bad input together: it must succeed and lose nothing."""
    home = root / "bad_build"
    done = run_build(home, "badinputs", [folder])
    if done.returncode != 0:
        report.failed_builds += 1
        report.problems.append(f"build over the bad inputs failed: {done.stderr[-500:]}")
        return
    lost = build_records_lost(home, "badinputs", [folder])
    report.records_lost += lost
    if lost:
        report.problems.append(f"build over the bad inputs lost {lost} records")


def check_kills(
    root: Path, corpus: Sequence[Path], stages: Sequence[str], report: ReliabilityReport
) -> None:
    """Kill a build as each of `stages` starts, re-run it, compare with a clean build."""
    clean = run_build(root / "clean", "kill", corpus)
    if clean.returncode != 0:
        report.problems.append(f"clean build failed: {clean.stderr[-500:]}")
        return
    expected = newest_hash(root / "clean", "kill")
    for stage in stages:
        home = root / f"killed_{stage}"
        report.kills += 1
        killed = _kill_at(build_command(home, "kill", corpus), f"kill: {stage} started")
        rerun = run_build(home, "kill", corpus)
        same = rerun.returncode == 0 and newest_hash(home, "kill") == expected
        duplicates = _duplicate_versions(home) if rerun.returncode == 0 else -1
        if same and duplicates == 0:
            report.identical_reruns += 1
        else:
            report.problems.append(
                f"killed at {stage} (killed={killed}): rerun rc {rerun.returncode}, "
                f"same snapshot {same}, duplicate versions {duplicates}"
            )


def _kill_at(command: list[str], marker: str) -> bool:
    """Run `command` and SIGKILL it `KILL_DELAY_S` after `marker` appears on its stderr;
    whether it was killed (False: it ended first)."""
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if marker in line:
            time.sleep(KILL_DELAY_S)
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait()
    return proc.returncode == -signal.SIGKILL


def _duplicate_versions(home: Path) -> int:
    (duplicates,) = _one_row(
        home,
        "SELECT count(*) - count(DISTINCT (fact_id, recorded_from, operation)) "
        "FROM fact_version_log",
    )
    return int(duplicates)


def check_concurrent_queries(
    home: Path,
    collection: str,
    queries: Sequence[str],
    threads: int,
    build: Callable[[], None],
    report: ReliabilityReport,
) -> None:
    """Run `queries` from `threads` threads on `home` while `build` (which reports its own
    failures) writes into it."""
    from memory import Memory

    failures: list[str] = []
    asked: list[str] = []
    done = threading.Event()

    def ask() -> None:
        with Memory.open(home, collection=collection) as memory:
            while not done.is_set():
                for text in queries:
                    asked.append(text)
                    try:
                        memory.query(text, strategy="hybrid", k=3)
                    except Exception as exc:  # the finding: a query that failed
                        failures.append(f"{text!r}: {type(exc).__name__}: {exc}")

    workers = [threading.Thread(target=ask) for _ in range(threads)]
    for worker in workers:
        worker.start()
    try:
        build()
    finally:
        done.set()
        for worker in workers:
            worker.join()
    report.concurrent_queries += len(asked)
    report.failed_queries += len(failures)
    report.problems.extend(failures[:5])


def check_concurrent_builds(
    home: Path, prefix: str, inputs: Sequence[Sequence[Path]], report: ReliabilityReport
) -> None:
    """Start one build per entry of `inputs` into `home` at once, as collections
    `<prefix>0`, `<prefix>1`, ...; each must succeed."""
    procs = [
        subprocess.Popen(
            build_command(home, f"{prefix}{i}", paths),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, paths in enumerate(inputs)
    ]
    for proc in procs:
        _, err = proc.communicate()
        report.concurrent_builds += 1
        if proc.returncode != 0:
            report.failed_builds += 1
            report.problems.append(f"concurrent build failed: {err[-500:]}")


def run_reliability(
    root: Path,
    corpus: Sequence[Path],
    kill_stages: Sequence[str],
    queries: Sequence[str],
    threads: int = 4,
) -> ReliabilityReport:
    """Every check, in folders under `root` (which must not exist yet)."""
    report = ReliabilityReport()
    root.mkdir(parents=True)
    check_bad_build(root, check_bad_inputs(root, report), report)
    check_kills(root, corpus, kill_stages, report)
    halves = [corpus[: max(1, len(corpus) // 2)], corpus[max(1, len(corpus) // 2) :] or corpus]
    together = root / "together"
    check_concurrent_builds(together, "fresh", halves, report)  # a new home

    def into_the_initialised_home() -> None:
        check_concurrent_builds(together, "again", halves, report)

    if newest_hash(together, "fresh0") is None:
        into_the_initialised_home()
    else:  # queries on the first build's snapshot while two more write into its home
        check_concurrent_queries(
            together, "fresh0", queries, threads, into_the_initialised_home, report
        )
    return report
