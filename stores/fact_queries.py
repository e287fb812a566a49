"""As-of reads of the fact store on both time axes: "what was true on date V, as known at
time R".

Valid time answers "when was it true in the world" (`valid_from` <= V < `valid_to`, an
open end meaning still true, an unknown start meaning "since before we know"); recorded
time answers "what did the memory believe at R" (the version recorded at or before R and
not superseded by R). Retracted versions are beliefs withdrawn and never returned.
Confidence stratification (REAL): facts below `THETA_STABLE` come with `stable = False`.
The order is total (the version id breaks the last ties), so a snapshot's graph index
and a direct read list the same facts in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import pyarrow as pa

from schemas.tables import FactOperation
from transforms.facts import THETA_STABLE

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
ORDER BY head_name, relation, valid_from NULLS FIRST, tail_name, version_id
"""


@dataclass(frozen=True)
class AsOf:
    """The two time coordinates of a fact query; `known_at` None means now."""

    valid_at: datetime | None = None
    known_at: datetime | None = None

    def known(self) -> datetime:
        return self.known_at or datetime.now(UTC)


def facts_table_as_of(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    as_of: AsOf = AsOf(),
    *,
    entity_ids: list[str] | None = None,
    relation: str | None = None,
    stable_only: bool = False,
) -> pa.Table:
    """Fact versions of `collection` valid at `as_of.valid_at` as known at `as_of.known_at`,
    as one Arrow table (columns of `fact_versions` but `supersedes`, plus `stable`)."""
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
    return con.sql(FACTS_SQL, params=params).to_arrow_table()
