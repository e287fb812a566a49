"""As-of fact queries on both time axes: "what was true on date V, as known at time R".

Valid time answers "when was it true in the world" (`valid_from` <= V < `valid_to`, an
open end meaning still true, an unknown start meaning "since before we know"); recorded
time answers "what did the memory believe at R" (the version recorded at or before R and
not superseded by R). Retracted versions are beliefs withdrawn and never returned.
Confidence stratification (REAL): facts below `THETA_STABLE` are returned with
`stable = False`; normal retrieval leaves them out unless the query is speculative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from schemas.tables import FactOperation
from transforms.consolidation import normalize_name
from transforms.facts import THETA_STABLE

SPECULATIVE = re.compile(r"\b(guess|maybe|speculat\w*|perhaps|might|possibly)\b", re.IGNORECASE)

FACTS_SQL = """
SELECT * EXCLUDE (supersedes), confidence >= $theta AS stable
FROM fact_versions
WHERE collection = $collection
  AND recorded_from <= $known_at AND (recorded_to IS NULL OR recorded_to > $known_at)
  AND operation <> $retract
  AND ($valid_at IS NULL OR ((valid_from IS NULL OR valid_from <= $valid_at)
                             AND (valid_to IS NULL OR valid_to > $valid_at)))
  AND ($entities IS NULL OR list_contains($entities, head_entity_id)
                         OR list_contains($entities, tail_entity_id))
  AND ($relation IS NULL OR relation = $relation)
  AND ($min_confidence IS NULL OR confidence >= $min_confidence)
ORDER BY head_name, relation, valid_from NULLS FIRST, tail_name
"""

ENTITY_SQL = """
SELECT DISTINCT e.entity_id FROM entities e
LEFT JOIN entity_aliases a ON a.collection = e.collection AND a.entity_id = e.entity_id
WHERE e.collection = ? AND (e.norm_key = ? OR lower(a.alias) = lower(?) OR lower(e.name) = lower(?))
"""


@dataclass(frozen=True)
class AsOf:
    """The two time coordinates of a fact query; `known_at` None means now."""

    valid_at: datetime | None = None
    known_at: datetime | None = None

    def known(self) -> datetime:
        return self.known_at or datetime.now(UTC)


def is_speculative(query: str) -> bool:
    """Whether a query asks for uncertain information ("guess", "maybe", ...)."""
    return bool(SPECULATIVE.search(query))


def resolve_entity(con: duckdb.DuckDBPyConnection, collection: str, name: str) -> list[str]:
    """Entity ids whose name, normalised key or alias is `name`."""
    rows = con.execute(ENTITY_SQL, [collection, normalize_name(name), name, name]).fetchall()
    return sorted(r[0] for r in rows)


def facts_as_of(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    as_of: AsOf = AsOf(),
    *,
    entity_ids: list[str] | None = None,
    relation: str | None = None,
    stable_only: bool = False,
) -> list[dict[str, Any]]:
    """Fact versions of `collection` valid at `as_of.valid_at` as known at `as_of.known_at`."""
    params = {
        "collection": collection,
        "known_at": as_of.known(),
        "valid_at": as_of.valid_at,
        "entities": entity_ids,
        "relation": relation,
        "theta": THETA_STABLE,
        "min_confidence": THETA_STABLE if stable_only else None,
        "retract": FactOperation.RETRACT.value,
    }
    return con.sql(FACTS_SQL, params=params).to_arrow_table().to_pylist()
