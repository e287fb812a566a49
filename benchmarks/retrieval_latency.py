"""Retrieval latency per strategy, as a ratio to `dense` measured in the same run, and memory.

For each size (the built sample corpus, or a synthetic graph of N facts from
`benchmarks.synthetic_memory`, cached under the home by size) every strategy is measured
in a spawned process of its own, one after another:

- the child loads the MiniLM query encoder and opens a fresh `Memory` on the snapshot
  (nothing is shared with the strategy measured before), and its resident memory then is
  the "base" figure;
- a first query timed on its own: "first query / build", the cost of the structures the
  strategy builds once per snapshot view (graph, matrices, indexes opened);
- then `queries` timed queries (k = 10, `time.perf_counter` around `Memory.query`, query
  embedding included because every strategy pays it), summarised as p50 and p95 (numpy's
  linear-interpolation percentiles) and as ratios to dense's p50 and p95 of the same size;
- before each strategy the snapshot's graph index and LanceDB files are read once into
  the operating system's page cache (`benchmarks.page_cache`; `--no-warm-cache` skips it),
  so that no strategy pays for pages another one evicted or gains from pages another one
  read;
- the child's peak resident memory (`benchmarks.process_memory`, VmHWM: Python objects,
  Arrow, LanceDB, DuckDB, numpy and torch alike) is the strategy's peak; minus the base it
  is what the strategy's structures and queries cost.

A process per strategy makes the peak the strategy's own (a Python heap does not give
memory back to the system, so a shared process would report the largest strategy so far),
and a strategy that runs out of memory is reported with the error and the run goes on.
`dense` is always measured (added first if not asked for), since every ratio needs it.

Queries: for the sample, questions about the corpus's entities from its README's ground
truth; for synthetic graphs, questions naming one or two entities of sampled facts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import page_cache, synthetic_memory
from benchmarks.process_memory import current_rss_mib, own_peak_rss_mib
from memory.memory import Memory
from memory.strategies.registry import STRATEGIES
from pipelines import graph_index
from stores.graph_index import graph_index_dir
from stores.snapshots import list_snapshots
from stores.warehouse import Warehouse
from stores.workspace import Workspace
from transforms.embedding import encode

SAMPLE = Path(__file__).resolve().parent.parent / "sample_corpus"
BENCH_DIR = "bench_retrieval"
K = 10
SAMPLE_QUESTIONS = (
    "Where does Priya Natarajan work?",
    "Which city is the Harborview Office located in?",
    "In which city does Tomasz Kowalski work?",
    "Who is the CEO of Acme Corporation?",
    "Where is the headquarters of Acme Corporation?",
    "Who leads the Firmware team?",
    "Which office is the Quality Assurance team based at?",
    "Who designed the Inkwell 3000?",
    "What does error E-42 mean on the Inkwell 3000?",
    "When did Acme Corporation acquire Brightpage Labs?",
    "Where does Laura Chen work?",
    "Who founded Acme Corporation?",
    "What fixed the E-42 problem Dana Ruiz had?",
    "Where does Sam Okafor live?",
    "How much does the Swiftscan S2 cost?",
    "Who leads the Customer Support team?",
)
"""Questions on the sample corpus's entities (sample_corpus/README.md, ground truth)."""


@dataclass(frozen=True)
class Target:
    """One size to measure: the workspace, its collection, its questions and counts."""

    label: str
    root: Path
    collection: str
    questions: list[str]
    prepare_seconds: float


@dataclass
class StrategyLatency:
    """Latency and memory of one strategy on one size."""

    size: str
    strategy: str
    queries: int
    first_query_ms: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    ratio_to_dense: dict[str, float | None] = field(default_factory=dict)
    base_rss_mib: float | None = None
    """The measuring process after loading the encoder and opening the snapshot."""
    peak_rss_mib: float | None = None
    """The measuring process's peak: base plus the strategy's structures and queries."""
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SizeResult:
    """Every strategy on one size, with the snapshot's counts and the largest peak RSS of
    the strategies' measuring processes."""

    size: str
    snapshot_id: str
    counts: dict[str, int]
    prepare_seconds: float
    peak_rss_mib: float
    rows: list[StrategyLatency]
    warmed_mib: float = 0.0
    """What `benchmarks.page_cache.warm` read before each strategy (0: not warmed)."""

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows": [r.as_dict() for r in self.rows]}


@dataclass
class Hooks:
    """Progress callbacks: `task(description, total)` starts a step of `total` units (None:
    unknown), `advance()` completes one unit, `measured(row)` hands over each strategy's
    row as soon as it is measured (so a long run's figures survive a later failure)."""

    task: Callable[[str, int | None], None] = lambda _d, _t: None
    advance: Callable[[], None] = lambda: None
    measured: Callable[[StrategyLatency], None] = lambda _r: None


def parse_sizes(text: str) -> list[str]:
    """`sample,100000,1_000_000` -> ["sample", "100000", "1000000"]; rejects anything else."""
    sizes = []
    for part in (p.strip().replace("_", "") for p in text.split(",") if p.strip()):
        if part != "sample" and not (part.isdigit() and int(part) >= 10):
            raise ValueError(f"size {part!r} is neither 'sample' nor a fact count >= 10")
        sizes.append(part if part == "sample" else str(int(part)))
    if not sizes:
        raise ValueError("no sizes given")
    return sizes


def resolve_strategies(text: str | Sequence[str] | None) -> list[str]:
    """Registered strategies to measure (all by default), `dense` first in any case."""
    if text is None or text == "all":
        wanted = list(STRATEGIES)
    else:
        parts = text.split(",") if isinstance(text, str) else list(text)
        wanted = [p.strip() for p in parts if p.strip()]
    unknown = [s for s in wanted if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; registered: {', '.join(STRATEGIES)}")
    return ["dense", *[s for s in wanted if s != "dense"]]


def prepare_sample(home: Path, hooks: Hooks) -> Target:
    """The home's own `sample` snapshot if it has one, else the sample corpus built without
    an LLM into `<home>/bench_retrieval/sample` (once; later runs reuse it)."""
    started = time.perf_counter()
    root = home if _has_snapshot(home, "sample") else home / BENCH_DIR / "sample"
    if not _has_snapshot(root, "sample"):
        from dagster_project.build import build_collection, stage_order
        from dagster_project.definitions import kgmem_definitions
        from dagster_project.resources import PipelineSettings

        defs = kgmem_definitions()
        hooks.task("sample: building the corpus (no LLM)", len(stage_order(defs)))
        inputs = [str(SAMPLE / "documents"), str(SAMPLE / "conversations")]
        build_collection(
            "sample",
            inputs,
            Workspace.at(root),
            defs,
            PipelineSettings(llm_backend="none"),
            lambda _stage, summary: hooks.advance() if summary is not None else None,
        )
    return Target("sample", root, "sample", list(SAMPLE_QUESTIONS), time.perf_counter() - started)


def prepare_synthetic(home: Path, n_facts: int, queries: int, hooks: Hooks) -> Target:
    """The synthetic workspace of `n_facts` under `<home>/bench_retrieval/`, generated
    once per size with its snapshot's graph index (`pipelines.graph_index`, as a build
    leaves it), and `queries + 1` questions on its facts (the first is the warm-up)."""
    started = time.perf_counter()
    root = home / BENCH_DIR / f"synthetic-{n_facts}"
    hooks.task(f"{n_facts:,} facts: synthetic workspace", None)
    summary = synthetic_memory.cached(
        root, n_facts, progress=lambda step: hooks.task(f"{n_facts:,} facts: {step}", None)
    )
    hooks.task(f"{n_facts:,} facts: graph index", None)
    graph_index.run(Warehouse(str(root)), summary.collection)
    con = Workspace.at(root).connect(read_only=True)
    try:
        questions = synthetic_memory.synthetic_questions(con, queries + 1)
    finally:
        con.close()
    return Target(str(n_facts), root, summary.collection, questions, time.perf_counter() - started)


def _has_snapshot(root: Path, collection: str) -> bool:
    import duckdb

    workspace = Workspace.at(root)
    if not workspace.warehouse_path.exists():
        return False
    try:
        con = workspace.connect(read_only=True)
    except duckdb.Error:
        return False
    try:
        return bool(list_snapshots(con, collection))
    except duckdb.Error:
        return False
    finally:
        con.close()


def _questions(target: Target, queries: int) -> tuple[str, list[str]]:
    """The warm-up question and `queries` measured ones (cycling if there are fewer)."""
    pool = target.questions
    warm_up, rest = pool[0], pool[1:] or pool
    return warm_up, [rest[i % len(rest)] for i in range(queries)]


def measure(
    target: Target,
    strategy: str,
    queries: int,
    hooks: Hooks,
    options: Mapping[str, Any] | None = None,
    threads: int | None = None,
) -> StrategyLatency:
    """`strategy` on the target, measured in a spawned process of its own, with `options`
    handed to every query (`Memory.query`'s `options`); with `threads`, under the thread
    limits `kgmem serve --query-threads threads` runs its queries with."""
    warm_up, measured = _questions(target, queries)
    result = StrategyLatency(target.label, strategy, queries)
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
            child = pool.submit(
                measure_in_process,
                str(target.root),
                target.collection,
                strategy,
                warm_up,
                measured,
                dict(options or {}),
                threads,
            )
            figures = child.result()
    except Exception as exc:  # a failing (or killed) strategy is reported, not fatal
        result.error = f"{type(exc).__name__}: {exc}"
        return result
    for _ in measured:
        hooks.advance()
    p50, p95 = np.percentile(figures["seconds"], [50, 95])
    result.p50_ms, result.p95_ms = _ms(p50), _ms(p95)
    result.first_query_ms = figures["first_query_ms"]
    result.base_rss_mib, result.peak_rss_mib = figures["base_rss_mib"], figures["peak_rss_mib"]
    return result


def measure_in_process(
    root: str,
    collection: str,
    strategy: str,
    warm_up: str,
    questions: list[str],
    options: dict[str, Any] | None = None,
    threads: int | None = None,
) -> dict[str, Any]:
    """The child's side of `measure`: base memory, first query, timed queries, peak."""
    if threads is not None:
        from memory.serving.process import limit_query_threads

        limit_query_threads(threads)
    with Memory.open(root, collection=collection) as memory:
        encode(["warm up the query encoder"], memory.snapshot.embedding_model, role="query")
        base = current_rss_mib()
        started = time.perf_counter()
        memory.query(warm_up, strategy=strategy, k=K, options=options)
        first = time.perf_counter() - started
        seconds = []
        for question in questions:
            started = time.perf_counter()
            memory.query(question, strategy=strategy, k=K, options=options)
            seconds.append(time.perf_counter() - started)
    return {
        "first_query_ms": _ms(first),
        "seconds": seconds,
        "base_rss_mib": round(base, 1) if base is not None else None,
        "peak_rss_mib": round(own_peak_rss_mib(), 1),
    }


def _ms(seconds: float) -> float:
    return round(float(seconds) * 1000.0, 3)


def with_ratios(rows: list[StrategyLatency]) -> list[StrategyLatency]:
    """Fill each row's p50/p95 ratios to the dense row of the same size."""
    dense = next((r for r in rows if r.strategy == "dense" and r.error is None), None)
    for row in rows:
        row.ratio_to_dense = {
            q: (
                round(getattr(row, f"{q}_ms") / getattr(dense, f"{q}_ms"), 3)
                if dense and row.error is None and getattr(dense, f"{q}_ms")
                else None
            )
            for q in ("p50", "p95")
        }
    return rows


def run(
    sizes: Sequence[str],
    queries: int = 50,
    strategies: Sequence[str] | str | None = None,
    home: str | Path | None = None,
    hooks: Hooks | None = None,
    options: Mapping[str, Any] | None = None,
    warm_cache: bool = True,
) -> list[SizeResult]:
    """Measure every strategy on every size (see the module docstring for what and how),
    `options` handed to every strategy's queries (`kgmem bench retrieval --option`), the
    page cache warmed before each strategy unless `warm_cache` is off."""
    if queries < 1:
        raise ValueError(f"--queries must be at least 1, got {queries}")
    names = resolve_strategies(strategies)
    hooks = hooks or Hooks()
    root = Workspace.at(home).root
    results = []
    for size in parse_sizes(",".join(sizes)):
        if size == "sample":
            target = prepare_sample(root, hooks)
        else:
            target = prepare_synthetic(root, int(size), queries, hooks)
        results.append(measure_target(target, names, queries, hooks, options, warm_cache))
    return results


def measure_target(
    target: Target,
    names: Sequence[str],
    queries: int,
    hooks: Hooks | None = None,
    options: Mapping[str, Any] | None = None,
    warm_cache: bool = True,
) -> SizeResult:
    """Every strategy of `names` (dense first, see `resolve_strategies`) on one target's
    latest snapshot, with the query encoder loaded before any measurement; with
    `warm_cache`, the snapshot's graph index and LanceDB files read into the page cache
    before each strategy (`benchmarks.page_cache`)."""
    hooks = hooks or Hooks()
    with Memory.open(target.root, collection=target.collection) as memory:
        snapshot = memory.snapshot
    workspace = Workspace.at(target.root)
    folders = [graph_index_dir(workspace, snapshot.snapshot_id), workspace.lance_path]
    rows = []
    warmed = 0
    for name in names:
        if warm_cache:
            hooks.task(f"{target.label}: page cache", None)
            warmed = page_cache.warm(folders)
        hooks.task(f"{target.label}: {name}", queries)
        rows.append(measure(target, name, queries, hooks, options))
        hooks.measured(rows[-1])
    return SizeResult(
        size=target.label,
        snapshot_id=snapshot.snapshot_id,
        counts=dict(snapshot.counts),
        prepare_seconds=round(target.prepare_seconds, 2),
        peak_rss_mib=max((r.peak_rss_mib for r in rows if r.peak_rss_mib), default=0.0),
        rows=with_ratios(rows),
        warmed_mib=round(warmed / 2**20, 1),
    )
