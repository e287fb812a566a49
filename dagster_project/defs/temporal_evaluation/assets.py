"""Evaluation: temporal retrieval (TimeQA) on the collection's newest snapshot, in the
`evaluate_temporal` job (`kgmem eval temporal` launches it after the build, with the
dataset as run config)."""

import time
from datetime import UTC, datetime

import dagster as dg
from pydantic import Field

from dagster_project.defs.stage_result import stage_result
from dagster_project.partitions import collections_partitions
from dagster_project.resources import WarehouseResource
from memory import Memory
from memory.evaluation import ranking_code_digest, temporal_hits
from stores.evaluation_results import newest_snapshot
from transforms.evaluation.timeqa import load_timeqa
from transforms.ids import content_id

BENCHMARK = "timeqa"
STRATEGIES = ("dense", "bm25", "hipporag_ppr")


class TemporalEvaluationConfig(dg.Config):
    dataset: str = Field(description="TimeQA-layout JSON file")
    max_articles: int | None = Field(None, description="only the first N articles")


@dg.asset(
    partitions_def=collections_partitions,
    group_name="evaluation",
    kinds={"python"},
    deps=["memory_snapshot"],
)
def temporal_evaluation(
    context: dg.AssetExecutionContext,
    config: TemporalEvaluationConfig,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """hit@k of every strategy on TimeQA's time-constrained questions, retrieving at the
    question's reference time and ignoring it."""
    started = time.perf_counter()
    collection = context.partition_key
    dataset = load_timeqa(config.dataset, config.max_articles)
    snapshot_id = newest_snapshot(warehouse, collection)
    fingerprint = content_id(snapshot_id, config.model_dump(), STRATEGIES, ranking_code_digest())
    if warehouse.fingerprint_unchanged(collection, BENCHMARK, fingerprint):
        return stage_result(started=started, rows_in=0, rows_out=0, skipped=True)
    with Memory.open(warehouse.workspace.root, snapshot=snapshot_id) as memory:
        rows = temporal_hits(memory, dataset, STRATEGIES)
    now = datetime.now(UTC)
    key = {"collection": collection, "snapshot_id": snapshot_id, "benchmark": BENCHMARK}
    warehouse.replace_where(
        "evaluation_results",
        key,
        [{**key, **row, "evaluated_at": now} for row in rows],
    )
    warehouse.record_fingerprint(collection, BENCHMARK, fingerprint)
    return stage_result(
        started=started,
        rows_in=len(dataset.questions),
        rows_out=len(rows),
        snapshot_id=snapshot_id,
        questions_skipped=dg.MetadataValue.json(dataset.skipped),
        results=dg.MetadataValue.md(results_table(rows)),
    )


def results_table(rows: list[dict[str, object]]) -> str:
    """Markdown table: one row per strategy, one column per metric."""
    metrics = sorted({str(r["metric"]) for r in rows})
    by_strategy: dict[str, dict[str, object]] = {}
    for r in rows:
        by_strategy.setdefault(str(r["strategy"]), {})[str(r["metric"])] = r["value"]
    lines = ["| strategy | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
    for strategy, values in by_strategy.items():
        lines.append(f"| {strategy} | " + " | ".join(f"{values[m]:.3f}" for m in metrics) + " |")
    return "\n".join(lines)
