"""The jobs of the code location: the partitioned build job the sensor, the schedule and UI
backfills launch, and the evaluation jobs `kgmem eval` and the launchpad run.

A build selects the stage groups (ingest, extract, consolidate, memory); evaluations are
jobs of their own, never steps of a build: they need run config (the benchmark's dataset)
that a build does not have. Steps run in one process, in lineage order: a run then holds
at most one warehouse transaction at a time, and the steps skip the 20-second import a
process per step costs.
"""

from __future__ import annotations

import dagster as dg

from dagster_project.partitions import collections_partitions

BUILD_JOB = "build_collection"
BUILD_GROUPS = ("ingest", "extract", "consolidate", "memory")
"""Asset groups of a collection's build, in lineage order."""
RETRIEVAL_JOB = "evaluate_retrieval"
TEMPORAL_JOB = "evaluate_temporal"
RETRIEVAL_ASSETS = ("retrieval_evaluation", "retrieval_comparison")
TEMPORAL_ASSETS = ("temporal_evaluation",)


def build_job() -> dg.UnresolvedAssetJobDefinition:
    """The job that builds one collection partition."""
    return dg.define_asset_job(
        BUILD_JOB,
        selection=dg.AssetSelection.groups(*BUILD_GROUPS),
        partitions_def=collections_partitions,
        executor_def=dg.in_process_executor,
        description="Materialise every stage of one collection (partition) in lineage order; "
        "select a partition range to backfill.",
    )


def evaluation_jobs() -> list[dg.UnresolvedAssetJobDefinition]:
    """The retrieval (LoCoMo, MuSiQue) and temporal (TimeQA) evaluation jobs of a built
    collection: their datasets and options are run config."""
    return [
        dg.define_asset_job(
            name,
            selection=dg.AssetSelection.assets(*assets),
            partitions_def=collections_partitions,
            executor_def=dg.in_process_executor,
            description=description,
        )
        for name, assets, description in (
            (
                RETRIEVAL_JOB,
                RETRIEVAL_ASSETS,
                "Score the retrieval strategies on a collection's newest snapshot "
                "(config: benchmark, questions file, strategies) and compare them.",
            ),
            (
                TEMPORAL_JOB,
                TEMPORAL_ASSETS,
                "hit@k with and without the question's time on a TimeQA collection "
                "(config: dataset).",
            ),
        )
    ]
