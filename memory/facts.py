"""What a query asks of the fact store: whether it is speculative (REAL: only then may it
use facts below θ_stable) and which entities a name resolves to. The as-of reads
themselves are `stores.fact_queries`."""

from __future__ import annotations

import re

import duckdb

from transforms.consolidation import normalize_name

SPECULATIVE = re.compile(r"\b(guess|maybe|speculat\w*|perhaps|might|possibly)\b", re.IGNORECASE)

ENTITY_SQL = """
SELECT DISTINCT e.entity_id FROM entities e
LEFT JOIN entity_aliases a ON a.collection = e.collection AND a.entity_id = e.entity_id
WHERE e.collection = ? AND (e.norm_key = ? OR lower(a.alias) = lower(?) OR lower(e.name) = lower(?))
"""


def is_speculative(query: str) -> bool:
    """Whether a query asks for uncertain information ("guess", "maybe", ...)."""
    return bool(SPECULATIVE.search(query))


def resolve_entity(con: duckdb.DuckDBPyConnection, collection: str, name: str) -> list[str]:
    """Entity ids whose name, normalised key or alias is `name`."""
    rows = con.execute(ENTITY_SQL, [collection, normalize_name(name), name, name]).fetchall()
    return sorted(r[0] for r in rows)
