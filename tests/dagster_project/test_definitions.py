"""The code location loads, with every stage, its lineage and its blocking contract checks."""

import dagster as dg

from dagster_project.automation.jobs import BUILD_JOB, RETRIEVAL_JOB, TEMPORAL_JOB
from dagster_project.build import stage_order
from dagster_project.definitions import kgmem_definitions
from memory.strategies.registry import STRATEGIES

defs = kgmem_definitions()

STAGES = [
    "raw_documents",
    "segments",
    "entity_mentions",
    "llm_triplets",
    "relation_candidates",
    "entities",
    "fact_versions",
    "segment_phrases",
    "segment_nodes",
    "graph_embeddings",
    "entity_links",
    "memory_snapshot",
    "graph_index",
    "temporal_evaluation",
    "retrieval_evaluation",
    "retrieval_comparison",
]
DATASET_LEVEL = ["extraction_evaluation"]


def test_definitions_load_with_every_stage_in_lineage_order():
    graph = defs.resolve_asset_graph()
    order = [k.to_user_string() for k in graph.toposorted_asset_keys]
    assert sorted(order) == sorted(STAGES + DATASET_LEVEL)
    assert order.index("segments") < order.index("entity_mentions") < order.index("fact_versions")
    assert order.index("segments") < order.index("segment_nodes") < order.index("graph_embeddings")
    assert order.index("graph_embeddings") < order.index("entity_links")
    assert order.index("entity_links") < order.index("memory_snapshot") < order.index("graph_index")
    assert order.index("memory_snapshot") < order.index("temporal_evaluation")
    assert order.index("memory_snapshot") < order.index("retrieval_evaluation")
    assert order.index("retrieval_evaluation") < order.index("retrieval_comparison")
    upstream = {k.to_user_string() for k in graph.get(dg.AssetKey("fact_versions")).parent_keys}
    assert upstream == {"entities", "relation_candidates", "llm_triplets"}


def test_contract_checks_are_blocking():
    graph = defs.resolve_asset_graph()
    checks = {k.name: graph.get_check_spec(k) for k in graph.asset_check_keys}
    contracts = {name: spec for name, spec in checks.items() if name.endswith("_contract")}
    assert set(contracts) == {"segments_contract", "fact_versions_contract"}
    assert all(spec.blocking for spec in contracts.values())
    rates = {name: spec for name, spec in checks.items() if name.endswith("_quarantine_rate")}
    assert set(rates) == {"llm_triplets_quarantine_rate"}
    assert all(spec.blocking for spec in rates.values())
    regression = {n: spec for n, spec in checks.items() if n not in contracts and n not in rates}
    assert set(regression) == {f"{s}_recall_regression" for s in STRATEGIES}
    assert not any(spec.blocking for spec in regression.values())


def test_every_stage_is_partitioned_by_collection():
    graph = defs.resolve_asset_graph()
    for stage in STAGES:
        assert graph.get(dg.AssetKey(stage)).partitions_def.name == "collections"
    for dataset_level in DATASET_LEVEL:
        assert graph.get(dg.AssetKey(dataset_level)).partitions_def is None


def test_llm_stage_has_a_concurrency_pool():
    assert defs.resolve_asset_graph().get(dg.AssetKey("llm_triplets")).pools == {"llm"}


def test_a_build_runs_the_stages_and_evaluations_are_jobs_of_their_own():
    stages = [k.to_user_string() for k in stage_order(defs)]
    evaluations = {"temporal_evaluation", "retrieval_evaluation", "retrieval_comparison"}
    assert stages == [s for s in stages if s not in evaluations]
    assert set(stages) == set(STAGES) - evaluations
    build = defs.resolve_job_def(BUILD_JOB).asset_layer.selected_asset_keys
    assert {k.to_user_string() for k in build} == set(stages)
    retrieval = defs.resolve_job_def(RETRIEVAL_JOB).asset_layer.selected_asset_keys
    assert {k.to_user_string() for k in retrieval} == {
        "retrieval_evaluation",
        "retrieval_comparison",
    }
    temporal = defs.resolve_job_def(TEMPORAL_JOB).asset_layer.selected_asset_keys
    assert {k.to_user_string() for k in temporal} == {"temporal_evaluation"}
