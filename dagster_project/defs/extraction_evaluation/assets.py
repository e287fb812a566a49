"""Evaluation: NER and relation extraction quality on a Re-DocRED-layout dataset."""

import json
import time
from dataclasses import replace

import dagster as dg
from pydantic import Field

from dagster_project.defs.stage_result import stage_result
from dagster_project.resources import PipelineSettings, WarehouseResource
from transforms.evaluation.extractors import llm_extractor
from transforms.evaluation.report import evaluate_extraction
from transforms.llm.prompts import REAL_ATOMIC_FACTS_V1
from transforms.relation_classifier.probe import ProbeBackend, find_artifact

RESULTS_FILE = "extraction_evaluation.json"


class ExtractionEvalConfig(dg.Config):
    """Which dataset to score, and how much of it."""

    dataset: str = Field(description="Re-DocRED-layout JSON file")
    limit: int | None = Field(None, description="score only the first N documents")
    llm_documents: int = Field(
        0,
        description="also score the LLM extractor on the first N documents (0: skip; slow on CPU)",
    )


@dg.asset(group_name="evaluation", kinds={"python"})
def extraction_evaluation(
    context: dg.AssetExecutionContext,
    config: ExtractionEvalConfig,
    warehouse: WarehouseResource,
    settings: PipelineSettings,
) -> dg.MaterializeResult:
    """Mention-level NER precision/recall/F1 (types mapped to KGERMAR's) and document-level
    relation precision/recall/F1 of the dependency patterns and of the trained pair
    classifier (on its held-out documents), end to end on spaCy mentions and on gold ones."""
    started = time.perf_counter()
    folder = find_artifact(warehouse.workspace.root, settings.relation_classifier_model)
    classifier = ProbeBackend(folder) if folder else None
    report = evaluate_extraction(
        config.dataset, settings.spacy_model, classifier, limit=config.limit
    )
    results = report.to_dict()
    if config.llm_documents:
        llm_cfg = settings.llm_stage(str(warehouse.workspace.root / "llm_cache.duckdb"))
        if llm_cfg is not None:
            llm_cfg = replace(
                llm_cfg,
                gate=replace(llm_cfg.gate, prompts={"chunk": (REAL_ATOMIC_FACTS_V1.version_id,)}),
            )
            llm_report = evaluate_extraction(
                config.dataset,
                settings.spacy_model,
                None,
                extra={"llm:" + (llm_cfg.llm.backend or "default"): llm_extractor(llm_cfg)},
                limit=config.llm_documents,
            )
            results["llm_subset"] = llm_report.to_dict()
            context.log.info(llm_report.table())
    path = warehouse.workspace.root / "results" / RESULTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2))
    context.log.info(report.table())
    return stage_result(
        started=started,
        rows_in=report.documents,
        rows_out=len(results.get("relations", [])),
        classifier=str(folder) if folder else "none (run kgmem train relation-classifier)",
        results_file=str(path),
        report=dg.MetadataValue.md(f"```\n{report.table()}\n```"),
    )
