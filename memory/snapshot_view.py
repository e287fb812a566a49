"""A read-only view of one snapshot: its LanceDB tables at the pinned versions and its facts
as of the pinned recorded-time cutoff. Strategies query through this view only."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import duckdb
import lancedb
import numpy as np
import pyarrow as pa

from memory.snapshots import Snapshot
from memory.workspace import lance_table_name
from transforms.consolidation import normalize_name
from transforms.embedding import encode

RETRIEVABLE_FILTER = "kind IN ('chunk', 'turn')"

FACTS_AS_OF_SQL = """
SELECT * EXCLUDE (supersedes) FROM fact_versions
WHERE collection = ? AND recorded_from <= ? AND (recorded_to IS NULL OR recorded_to > ?)
  AND operation <> 'retract'
"""


@dataclass
class SnapshotView:
    """Tables and facts of `snapshot`, read lazily and cached for the view's lifetime."""

    snapshot: Snapshot
    con: duckdb.DuckDBPyConnection
    db: lancedb.DBConnection
    cache: dict[str, Any] = field(default_factory=dict)
    """Structures that strategies derive from the view (e.g. the PPR graph), built once."""

    def table(self, kind: str) -> lancedb.table.Table:
        table = self.db.open_table(lance_table_name(self.snapshot.collection, kind))
        table.checkout(self.snapshot.lance_versions[kind])
        return table

    @functools.cached_property
    def segments(self) -> pa.Table:
        return self.table("segments").to_arrow().drop_columns(["vector"])

    @functools.cached_property
    def segment_index(self) -> dict[str, int]:
        return {sid: i for i, sid in enumerate(self.segments.column("segment_id").to_pylist())}

    @functools.cached_property
    def entities(self) -> pa.Table:
        return self.table("entities").to_arrow()

    @functools.cached_property
    def alias_index(self) -> dict[str, str]:
        """Normalised alias -> entity id, for linking query text to entities."""
        index: dict[str, str] = {}
        for row in self.entities.select(["entity_id", "name", "aliases"]).to_pylist():
            for alias in [row["name"], *row["aliases"]]:
                key = normalize_name(alias)
                if key:
                    index.setdefault(key, row["entity_id"])
        return index

    @functools.cached_property
    def facts(self) -> list[dict[str, Any]]:
        cutoff = self.snapshot.recorded_cutoff
        params = [self.snapshot.collection, cutoff, cutoff]
        return self.con.sql(FACTS_AS_OF_SQL, params=params).to_arrow_table().to_pylist()

    @functools.cached_property
    def facts_by_segment(self) -> dict[str, list[dict[str, Any]]]:
        index: dict[str, list[dict[str, Any]]] = {}
        for fact in self.facts:
            for segment_id in fact["source_segment_ids"]:
                index.setdefault(segment_id, []).append(fact)
        return index

    def embed_query(self, text: str) -> np.ndarray:
        return encode([text], self.snapshot.embedding_model)[0]

    def segment(self, segment_id: str) -> dict[str, Any]:
        return self.segments.slice(self.segment_index[segment_id], 1).to_pylist()[0]
