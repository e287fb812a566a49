"""A build without an LLM backend leaves the LLM stage out of its runs, so the UI does not
show it materialised by a build that never ran it (issue 37, 3.12), and still reports it
skipped, with the reason, in lineage order."""

from __future__ import annotations

import contextlib

import dagster as dg

from dagster_project.build import LLM_STAGE_KEY, _runs
from pipelines.llm_triplets import NO_BACKEND

KEYS = [dg.AssetKey(k) for k in ("segments", "entity_mentions", "llm_triplets", "entities")]


def test_without_a_backend_the_llm_stage_is_an_empty_run_in_its_place() -> None:
    runs = _runs(KEYS, None, llm_enabled=False)
    assert [keys for keys, _ in runs] == [KEYS[:2], [], KEYS[3:]]
    assert [keys for keys, _ in _runs(KEYS, None, llm_enabled=True)] == [KEYS]


def test_a_guarded_llm_stage_keeps_its_own_run_with_a_backend() -> None:
    slot = contextlib.nullcontext()
    runs = _runs(KEYS, lambda key: slot if key == LLM_STAGE_KEY else None, llm_enabled=True)
    assert runs == [(KEYS[:2], None), ([LLM_STAGE_KEY], slot), (KEYS[3:], None)]


def test_the_sample_build_reports_the_stage_skipped_in_order(sample_build) -> None:
    _, summaries = sample_build
    stages = [s.stage for s in summaries]
    position = stages.index("llm_triplets")
    assert stages.index("entity_mentions") < position < stages.index("fact_versions")
    skipped = summaries[position]
    assert skipped.skipped and skipped.metadata["skip_reason"] == NO_BACKEND
    assert skipped.rows_in == skipped.rows_out == 0
