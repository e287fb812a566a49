"""Evaluation: retrieval quality of every strategy on LoCoMo and MuSiQue collections.

Both assets belong to the `evaluate_retrieval` job, not to a build: `kgmem eval retrieval`
launches them after building the benchmark's corpus, with the benchmark, its questions file
and the options as run config (the launchpad takes the same). `retrieval_evaluation`
scores every strategy on the collection's newest snapshot (per-strategy figures go into
`<strategy>/<metric>` metadata, which the UI plots across materializations) and carries
one regression check per strategy registered when the definitions load.
`retrieval_comparison` renders the side-by-side table and recall plot into its metadata and
into `<home>/results/retrieval_<collection>.{md,png,json}`.
"""

import base64
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
from pydantic import Field

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from memory import Memory
from memory.evaluation import (
    Reranking,
    evaluated_names,
    misses,
    ranking_code_digest,
    retrieval_scores,
    snapshot_segments,
)
from memory.reranker import RERANK_DEPTH
from memory.strategies.registry import STRATEGIES
from stores.evaluation_results import evaluation_rows, newest_snapshot
from transforms.evaluation.retrieval_metrics import regressions
from transforms.evaluation.retrieval_questions import load_questions
from transforms.evaluation.retrieval_report import (
    RECALL_METRICS,
    by_strategy,
    comparison_markdown,
    recall_plot_png,
)
from transforms.ids import content_id
from transforms.progress import start_progress

BENCHMARKS = tuple(RECALL_METRICS)
ASSET = "retrieval_evaluation"
FINGERPRINT_FIELD = "questions_fingerprint"
HISTORY = 50
"""How many earlier materializations to search for a strategy's previous figures."""


class RetrievalEvaluationConfig(dg.Config):
    """Which benchmark the collection is, its questions, and how to score it."""

    benchmark: str = Field(description="locomo or musique")
    dataset: str = Field(description="the benchmark's questions file")
    strategies: list[str] = Field(
        default_factory=list, description="strategies to score (empty: every strategy)"
    )
    questions: int | None = Field(None, description="only the first N questions")
    reranker: str | None = Field(None, description="cross-encoder of the NAME+rerank variants")
    rerank_depth: int = Field(RERANK_DEPTH, description="passages the reranker reorders")
    misses: str | None = Field(None, description="JSONL file for the missed gold units")
    jobs: int = Field(1, description="processes the strategies are split over")
    build_settings: str = Field(
        "{}", description="JSON: the build settings the evaluated snapshot was built with"
    )
    regression_margin: float = Field(
        0.02,
        description="a strategy's check fails when a recall metric (or MRR) drops by more "
        "than this (absolute) against its previous evaluation on the same questions",
    )


class RetrievalComparisonConfig(dg.Config):
    benchmark: str = Field(description="locomo or musique")
    build_settings: str = Field(
        "{}", description="JSON: the build settings the evaluated snapshot was built with"
    )


def check_name(strategy: str) -> str:
    return f"{strategy}_recall_regression"


@dg.asset(
    partitions_def=collections_partitions,
    group_name="evaluation",
    kinds={"python"},
    deps=["memory_snapshot"],
    check_specs=[
        dg.AssetCheckSpec(
            check_name(strategy),
            asset=ASSET,
            description=f"`{strategy}`: no recall drop beyond the margin against the "
            "previous evaluation on the same questions",
        )
        for strategy in STRATEGIES
    ],
)
def retrieval_evaluation(
    context: dg.AssetExecutionContext,
    config: RetrievalEvaluationConfig,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """Recall@k (MuSiQue: passage recall@2/5 and MRR; LoCoMo: turn- and session-level
    recall@3/5/10 per question category), latency p50/p95 and LLM calls and tokens per query
    of every strategy, on the collection's newest snapshot."""
    started = time.perf_counter()
    collection = context.partition_key
    if config.benchmark not in BENCHMARKS:
        raise ValueError(f"benchmark must be one of {BENCHMARKS}, not {config.benchmark!r}")
    strategies = evaluated_names(config.strategies)
    settings = json.loads(config.build_settings)
    snapshot_id = newest_snapshot(warehouse, collection)
    fingerprint = content_id(
        snapshot_id,
        config.model_dump(exclude={"misses", "jobs"}),
        strategies,
        ranking_code_digest(),
    )
    if warehouse.fingerprint_unchanged(collection, ASSET, fingerprint):
        return _skipped(
            started, f"snapshot {snapshot_id} already evaluated with these settings and code"
        )
    with Memory.open(warehouse.workspace.root, snapshot=snapshot_id) as memory:
        questions = load_questions(
            config.benchmark, config.dataset, snapshot_segments(memory), config.questions
        )
        reranking = Reranking(config.reranker, config.rerank_depth) if config.reranker else None
        progress = warehouse.workspace.progress_file(collection, ASSET)
        start_progress(progress, len(strategies) * len(questions.questions), "questions")
        run = retrieval_scores(
            memory, questions, strategies, reranking, progress=progress, jobs=config.jobs
        )
    if config.misses:
        missed = misses(questions, run)
        Path(config.misses).write_text(
            "".join(json.dumps(m, ensure_ascii=False, default=str) + "\n" for m in missed)
        )
        context.log.info(f"{len(missed)} missed gold units -> {config.misses}")
    for strategy, error in run.errors.items():
        context.log.error(f"strategy {strategy} failed: {error}")
    key = {"collection": collection, "snapshot_id": snapshot_id, "benchmark": config.benchmark}
    now = datetime.now(UTC)
    warehouse.replace_where(
        "evaluation_results", key, [{**key, **row, "evaluated_at": now} for row in run.rows]
    )
    if not run.errors:  # a failed strategy is evaluated again on the next run
        warehouse.record_fingerprint(collection, ASSET, fingerprint)
    current = by_strategy(run.rows)
    watched = RECALL_METRICS[config.benchmark]
    previous = previous_figures(context, questions.fingerprint)
    checks = [
        regression_check(
            strategy,
            {m: v for m, v in previous.get(strategy, {}).items() if m in watched},
            {m: v for m, v in current.get(strategy, {}).items() if m in watched},
            config.regression_margin,
            run.errors.get(strategy),
        )
        for strategy in STRATEGIES
    ]
    figures = {
        f"{strategy}/{metric}": dg.MetadataValue.float(value)
        for strategy, values in current.items()
        for metric, value in values.items()
        if "[" not in metric
    }
    return stage_result(
        started=started,
        rows_in=len(questions.questions),
        rows_out=len(run.rows),
        check_results=checks,
        snapshot_id=snapshot_id,
        benchmark=config.benchmark,
        strategies=dg.MetadataValue.json(strategies),
        questions_skipped=dg.MetadataValue.json(questions.skipped),
        strategy_errors=dg.MetadataValue.json(run.errors),
        build_settings=dg.MetadataValue.json(settings),
        **{FINGERPRINT_FIELD: questions.fingerprint},
        results=dg.MetadataValue.md(
            comparison_markdown(config.benchmark, run.rows, snapshot_id, settings)
        ),
        **figures,
    )


def _skipped(started: float, reason: str) -> dg.MaterializeResult:
    checks = [
        dg.AssetCheckResult(check_name=check_name(s), passed=True, description=f"skipped: {reason}")
        for s in STRATEGIES
    ]
    return stage_result(
        started=started, rows_in=0, rows_out=0, skipped=True, check_results=checks, reason=reason
    )


def previous_figures(
    context: dg.AssetExecutionContext, questions_fingerprint: str
) -> dict[str, dict[str, float]]:
    """Per strategy, its figures in the newest earlier materialization of this partition
    that evaluated it on the same questions (strategies evaluated at different times each
    find their own latest figures)."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(
            asset_key=context.asset_key, asset_partitions=[context.partition_key]
        ),
        limit=HISTORY,
    ).records
    found: dict[str, dict[str, float]] = {}
    for record in records:
        materialization = record.asset_materialization
        metadata = materialization.metadata if materialization else {}
        stamp = metadata.get(FINGERPRINT_FIELD)
        if stamp is None or stamp.value != questions_fingerprint:
            continue
        earlier: dict[str, dict[str, float]] = {}
        for name, value in metadata.items():
            strategy, slash, metric = name.partition("/")
            if slash and isinstance(value.value, int | float):
                earlier.setdefault(strategy, {})[metric] = float(value.value)
        for strategy, values in earlier.items():
            found.setdefault(strategy, values)
    return found


def regression_check(
    strategy: str,
    previous: dict[str, float],
    current: dict[str, float],
    margin: float,
    error: str | None = None,
) -> dg.AssetCheckResult:
    """The strategy's check: fails when the strategy raised (`error`) or `regressions`
    finds a drop beyond `margin`."""
    if error is not None:
        return dg.AssetCheckResult(
            check_name=check_name(strategy),
            passed=False,
            description=f"the strategy failed: {error}",
            metadata={"error": error},
        )
    if not current:
        return dg.AssetCheckResult(
            check_name=check_name(strategy),
            passed=True,
            description="not evaluated in this run",
        )
    drops = regressions(previous, current, margin)
    return dg.AssetCheckResult(
        check_name=check_name(strategy),
        passed=not drops,
        description=(
            f"dropped beyond {margin}: {drops}"
            if drops
            else "no previous figures on these questions"
            if not previous
            else f"no drop beyond {margin}"
        ),
        metadata={
            "margin": margin,
            "drops": dg.MetadataValue.json(drops),
            "previous": dg.MetadataValue.json(previous),
            "current": dg.MetadataValue.json(current),
        },
    )


@dg.asset(
    partitions_def=collections_partitions,
    group_name="evaluation",
    kinds={"python"},
    deps=[ASSET],
)
def retrieval_comparison(
    context: dg.AssetExecutionContext,
    config: RetrievalComparisonConfig,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """Every evaluated strategy side by side on the newest snapshot: a Markdown table and a
    recall@k bar chart, in the metadata and in `<home>/results/retrieval_<collection>.*`."""
    started = time.perf_counter()
    collection = context.partition_key
    snapshot_id = newest_snapshot(warehouse, collection)
    rows = evaluation_rows(warehouse, collection, snapshot_id, config.benchmark)
    settings = json.loads(config.build_settings)
    table = comparison_markdown(config.benchmark, rows, snapshot_id, settings)
    png = recall_plot_png(config.benchmark, rows)
    folder = warehouse.workspace.root / "results"
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"retrieval_{collection}"
    paths = {suffix: stem.with_suffix(f".{suffix}") for suffix in ("md", "png", "json")}
    paths["md"].write_text(table + f"\n![recall@k per strategy]({paths['png'].name})\n")
    paths["png"].write_bytes(png)
    report = {"benchmark": config.benchmark, "snapshot_id": snapshot_id}
    report |= {"build_settings": settings, "rows": rows}
    paths["json"].write_text(json.dumps(report, indent=2, default=str))
    image = base64.b64encode(png).decode("ascii")
    return stage_result(
        started=started,
        rows_in=len(rows),
        rows_out=len(by_strategy(rows)),
        snapshot_id=snapshot_id,
        benchmark=config.benchmark,
        build_settings=dg.MetadataValue.json(settings),
        table=dg.MetadataValue.md(table),
        plot=dg.MetadataValue.md(f"![recall@k per strategy](data:image/png;base64,{image})"),
        **{f"{suffix}_file": dg.MetadataValue.path(str(p)) for suffix, p in paths.items()},
    )
