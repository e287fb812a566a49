"""PersonalAI theses of the LLM stage, read for one snapshot.

A thesis is a row of the DuckDB table `llm_triplets` with `output_kind = 'thesis'` written
by the PersonalAI prompt (any version of `personalai_theses`, see transforms/llm/prompts.py):
the proposition text and the segment mentions of the entities it connects.

Choices (the paper describes no store):
- `llm_triplets` has no recorded-time column, so the snapshot's `recorded_cutoff` cannot
  filter it: every row of the collection is read. Rows whose segment is not among the
  snapshot's pinned segments are dropped by the caller, so a thesis of text the snapshot
  does not hold never enters its graph.
- Quarantined answers never produce rows; to stay safe when a later run quarantined an
  answer whose rows are still present, rows whose whole answer (`segment_id/prompt_version`,
  the stage's `record_ref`) sits in `quarantine` are skipped. An item-level quarantine
  (`…#index`) names an item that produced no row, so it needs no filter.
- A warehouse without the table (built before the LLM stage existed) has no theses.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from transforms.llm.prompts import PERSONALAI_THESES_V1

STAGE = "llm_triplets"

THESES_SQL = """
SELECT t.triplet_id, t.segment_id, t.thesis,
       list_transform(coalesce(t.thesis_entities, []), lambda e: e.text) AS entity_texts
FROM llm_triplets t
WHERE t.collection = $collection AND t.output_kind = 'thesis'
  AND t.prompt_version LIKE $prompt_prefix AND t.thesis IS NOT NULL
  AND NOT EXISTS (
      SELECT 1 FROM quarantine q
      WHERE q.collection = t.collection AND q.stage = $stage
        AND q.record_ref = t.segment_id || '/' || t.prompt_version)
ORDER BY t.triplet_id
"""
TABLES_SQL = "SELECT table_name FROM information_schema.tables WHERE table_name IN (?, ?)"


@dataclass(frozen=True)
class LlmThesis:
    """One PersonalAI thesis: its row id, the segment it was read from, its text and the
    mention texts of the entities it connects."""

    triplet_id: str
    segment_id: str
    text: str
    entity_texts: tuple[str, ...]


def read_theses(con: duckdb.DuckDBPyConnection, collection: str) -> list[LlmThesis]:
    """The collection's non-quarantined PersonalAI theses (none if the tables are absent)."""
    present = {row[0] for row in con.execute(TABLES_SQL, [STAGE, "quarantine"]).fetchall()}
    if present != {STAGE, "quarantine"}:
        return []
    params = {
        "collection": collection,
        "prompt_prefix": f"{PERSONALAI_THESES_V1.name}/%",
        "stage": STAGE,
    }
    rows = con.execute(THESES_SQL, params).fetchall()
    return [LlmThesis(r[0], r[1], r[2], tuple(r[3] or ())) for r in rows]
