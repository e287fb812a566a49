"""Reliability: what bad input, killed builds and concurrency do to a workspace.

`kgmem bench reliability` runs four checks and prints their counts:

- **bad inputs**: each kind of `benchmarks.bad_inputs.BAD_INPUTS` and `RECOVERED_INPUTS`,
  beside a good file, through the loader; handled cleanly means no exception, the good
  file loaded, the bad one quarantined with a reason (or, for a recovered kind such as
  UTF-16 or a turn with a bad time, loaded), and records read = documents + records
  quarantined. Then
  one real build over all of them together must succeed with its counts adding up.
- **bad arguments**: each kind of `benchmarks.bad_arguments.BAD_ARGUMENTS` (a bad
  collection name, a missing or empty input, a chunk budget of 0, a missing model, a bad
  environment setting) as a real CLI build: refused cleanly means exit status 2, one line
  on stderr naming the argument, and no warehouse created (no stage ran).
- **concurrent builds**: that build and a clean build of the corpus started together into
  a fresh workspace (both set it up and write into it at once), then one more build of the
  corpus, as another collection, into the same, now initialised, one.
- **kills**: a build of the corpus killed with SIGKILL a moment after a chosen stage
  starts, then run again: the snapshot's content hash must equal the clean build's, with
  no duplicate fact version.
- **concurrent queries**: queries from several threads on the clean build's snapshot, a
  reader held open, while that last build writes into its workspace; a query that raises
  counts as failed.

Records lost: for every load and build, records read − documents out − records quarantined.
Every build is the real CLI (`python -m kgmem build`) in a process of its
own, without the LLM stage.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb

from benchmarks.bad_arguments import BAD_ARGUMENTS
from benchmarks.bad_inputs import BAD_INPUTS, RECOVERED_INPUTS
from transforms.loaders import load_inputs

GOOD_TEXT = "Acme Corporation opened an office in Leeds in 2021."
KILL_DELAY_S = 1.0
"""How long after a stage starts its build is killed."""
QUERY_PAUSE_S = 0.05
"""How long a query thread waits between its rounds of questions. A busy loop of queries
in the bench's own process took a core from the builds it runs beside, which made them
slower without testing anything more: what matters is that queries keep arriving while
the builds write, and with this pause each thread still asks several times a second
(3,163 queries from 2 threads beside one reliability run of the tests)."""
CLEAN_COLLECTION, BAD_COLLECTION, AGAIN_COLLECTION = "clean", "badinputs", "again"
"""The corpus built whole (and killed), every bad input built together, and the corpus
built again into the initialised workspace while queries run."""


@dataclass
class ReliabilityReport:
    """The counts `kgmem bench reliability` prints (and writes as JSON)."""

    bad_inputs_tried: int = 0
    bad_inputs_handled: int = 0
    bad_arguments_tried: int = 0
    bad_arguments_refused: int = 0
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
    kinds = [(k, w, True) for k, w in BAD_INPUTS.items()]
    kinds += [(k, w, False) for k, w in RECOVERED_INPUTS.items()]
    for number, (kind, write, quarantines) in enumerate(kinds):
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
        kept = any(Path(d["source_path"]).name == bad.name for d in loaded.documents)
        good = any(d["text"].startswith(GOOD_TEXT) for d in loaded.documents)
        handled = flagged if quarantines else kept and not flagged
        if handled and good and lost == 0:
            report.bad_inputs_handled += 1
        else:
            found = f"quarantined={flagged} kept={kept} good={good} lost={lost}"
            report.problems.append(f"{kind}: {found}")
    return together


def check_bad_arguments(root: Path, corpus: Sequence[Path], report: ReliabilityReport) -> None:
    """Run a build of `corpus` with each kind of bad argument or setting, each into a home
    of its own under `root`: it must be refused before its first stage (see the module
    docstring)."""
    for number, (kind, bad) in enumerate(BAD_ARGUMENTS.items()):
        home = root / f"args{number}"
        inputs = list(corpus)
        if bad.empty_input:
            inputs = [root / f"empty{number}"]
            inputs[0].mkdir(parents=True)
        command = [*build_command(home, bad.collection, inputs), *bad.flags]
        env = {**os.environ, **dict(bad.env)}
        report.bad_arguments_tried += 1
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        one_line = len(lines) == 1 and lines[0].startswith("error:") and bad.named in lines[0]
        if done.returncode == 2 and one_line and not (home / "warehouse.duckdb").exists():
            report.bad_arguments_refused += 1
        else:
            report.problems.append(f"{kind}: exit {done.returncode}, stderr {lines[-3:]}")


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


def check_bad_build(home: Path, folder: Path, report: ReliabilityReport) -> None:
    """The build of every bad input together (collection `BAD_COLLECTION` in `home`) must
    have lost nothing; whether it succeeded is `check_concurrent_builds`' finding."""
    if newest_hash(home, BAD_COLLECTION) is None:
        return
    lost = build_records_lost(home, BAD_COLLECTION, [folder])
    report.records_lost += lost
    if lost:
        report.problems.append(f"build over the bad inputs lost {lost} records")


def check_kills(
    root: Path,
    corpus: Sequence[Path],
    stages: Sequence[str],
    expected: str | None,
    report: ReliabilityReport,
) -> None:
    """Kill a build of `corpus` (collection `CLEAN_COLLECTION`) as each of `stages` starts,
    re-run it, and compare its snapshot with the clean build's content hash `expected`."""
    if expected is None:
        report.problems.append("no clean build to compare killed builds with")
        return
    for stage in stages:
        home = root / f"killed_{stage}"
        report.kills += 1
        command = build_command(home, CLEAN_COLLECTION, corpus)
        killed = _kill_at(command, f"kill: {stage} started")
        rerun = run_build(home, CLEAN_COLLECTION, corpus)
        same = rerun.returncode == 0 and newest_hash(home, CLEAN_COLLECTION) == expected
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
                done.wait(QUERY_PAUSE_S)

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
    home: Path, builds: Mapping[str, Sequence[Path]], report: ReliabilityReport
) -> None:
    """Start one build per collection of `builds` (name -> inputs) into `home` at once;
    each must succeed."""
    procs = [
        subprocess.Popen(
            build_command(home, collection, paths),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for collection, paths in builds.items()
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
    """Every check, in folders under `root` (which must not exist yet). The clean build the
    killed ones are compared with, and the build over the bad inputs, are the pair of
    concurrent builds; one more writes beside the queries: three builds, plus one killed
    and re-run per kill stage, each in a process of its own. (A second pair of concurrent
    builds into the initialised workspace was dropped: two writers contending for one
    warehouse is what the first pair already does, and the pair cost a build more.)"""
    report = ReliabilityReport()
    root.mkdir(parents=True)
    bad = check_bad_inputs(root, report)
    check_bad_arguments(root / "arguments", corpus, report)
    together = root / "together"
    check_concurrent_builds(together, {CLEAN_COLLECTION: corpus, BAD_COLLECTION: [bad]}, report)
    check_bad_build(together, bad, report)
    clean = newest_hash(together, CLEAN_COLLECTION)
    check_kills(root, corpus, kill_stages, clean, report)

    def into_the_initialised_home() -> None:
        check_concurrent_builds(together, {AGAIN_COLLECTION: corpus}, report)

    if clean is None:
        into_the_initialised_home()
    else:  # queries on the clean build's snapshot while another build writes into its home
        check_concurrent_queries(
            together, CLEAN_COLLECTION, queries, threads, into_the_initialised_home, report
        )
    return report
