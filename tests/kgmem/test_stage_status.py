"""The build summary tells a stage skipped for a reason (the LLM stage without a backend)
from one whose input was unchanged."""

from __future__ import annotations

from dagster_project.stage_events import StageSummary
from kgmem.cli.build_cmd import stage_status
from pipelines import llm_triplets
from pipelines.settings import BuildSettings
from stores.warehouse import Warehouse


def _summary(metadata: dict) -> StageSummary:
    return StageSummary.of("llm_triplets", metadata, {})


def test_the_llm_stage_without_a_backend_reports_skipped_with_its_reason(monkeypatch, tmp_path):
    monkeypatch.delenv("KGMEM_LLM_BACKEND", raising=False)
    warehouse = Warehouse(str(tmp_path))
    outcome = llm_triplets.run(warehouse, "c", BuildSettings(llm_backend="none"))
    assert outcome.skipped and "no LLM backend" in outcome.skip_reason
    summary = _summary({"skipped_unchanged": False, "skip_reason": outcome.skip_reason})
    assert summary.skipped  # a second build still counts it as not run
    assert stage_status(summary) == f"skipped: {outcome.skip_reason}"


def test_an_unchanged_stage_and_a_run_stage():
    assert stage_status(_summary({"skipped_unchanged": True})) == "unchanged"
    assert stage_status(_summary({"skipped_unchanged": False})) == "done"
