"""Looking up an entity's merges, and recording a user's split or merge.

A split is a `cannot_link` constraint between two mention keys and a merge a `must_link`
one; the entities stage reads them on the next build, so correcting a wrong merge is one
row and nothing already built is edited.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import duckdb

from memory.facts import resolve_entity
from transforms.consolidation import normalize_name

LINKS_SQL = """
SELECT e.entity_id, e.name, e.entity_type, s.norm_key, s.method, s.score
FROM entity_same_as s JOIN entities e USING (collection, entity_id)
WHERE s.collection = $collection AND e.entity_id IN (
    SELECT entity_id FROM entity_same_as WHERE collection = $collection AND norm_key = $key)
ORDER BY s.method, s.norm_key
"""


def entity_links(
    con: duckdb.DuckDBPyConnection, collection: str, name: str
) -> list[dict[str, Any]]:
    """Every mention key merged into the entity that `name` resolves to, with method and score."""
    params = {"collection": collection, "key": normalize_name(name)}
    rows = con.sql(LINKS_SQL, params=params).to_arrow_table().to_pylist()
    if not rows:
        raise LookupError(f"no entity for {name!r} in collection {collection!r}")
    return rows


def add_constraint(
    con: duckdb.DuckDBPyConnection, collection: str, kind: str, a: str, b: str
) -> None:
    """Record that two names must (`must_link`) or must not (`cannot_link`) be one entity.
    Each name must be an entity (name, key or alias) of the collection: a typo would
    otherwise be recorded as a constraint that never applies."""
    if kind not in ("cannot_link", "must_link"):
        raise ValueError(f"unknown constraint {kind!r}")
    for name in (a, b):
        if not resolve_entity(con, collection, name):
            raise LookupError(f"no entity named {name!r} in collection {collection!r}")
    key_a, key_b = sorted((normalize_name(a), normalize_name(b)))
    if not key_a or key_a == key_b:
        raise ValueError(f"{a!r} and {b!r} name the same key; nothing to {kind}")
    con.execute("BEGIN")
    con.execute(  # a split undoes an earlier merge of the same pair, and vice versa
        "DELETE FROM entity_constraints WHERE collection = ? AND key_a = ? AND key_b = ?",
        [collection, key_a, key_b],
    )
    con.execute(
        "INSERT INTO entity_constraints VALUES (?, ?, ?, ?, ?)",
        [collection, kind, key_a, key_b, datetime.now(UTC)],
    )
    con.execute("COMMIT")
