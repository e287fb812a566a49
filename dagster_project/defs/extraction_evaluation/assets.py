"""Evaluation: NER and relation extraction quality on a Re-DocRED-layout dataset."""

import json
import time

import dagster as dg
from pydantic import Field

from dagster_project.defs.stage_result import stage_result
from dagster_project.resources import PipelineSettings, WarehouseResource
from transforms.evaluation.report import evaluate_extraction
from transforms.relation_classifier.probe import ProbeBackend, find_artifact

RESULTS_FILE = "extraction_evaluation.json"


class ExtractionEvalConfig(dg.Config):
    """Which dataset to score, and how much of it."""

    dataset: str = Field(
        "../shared/data/redocred/dev_revised.json", description="Re-DocRED-layout JSON file"
    )
    limit: int | None = Field(None, description="score only the first N documents")


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
