"""The JSON answers that `kgmem facts --json`, `kgmem snapshots --json` and `kgmem serve`
share, so the command line and the server return the same fields in the same forms."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import duckdb

from memory.facts import resolve_entity
from stores.fact_queries import AsOf, facts_table_as_of
from stores.snapshots import Snapshot

if TYPE_CHECKING:
    from memory.memory import QueryResult


def plain(value: Any) -> Any:
    """`value` as JSON-ready Python: times and other non-JSON values as their `str`."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def query_record(collection: str, result: QueryResult) -> dict[str, Any]:
    """A query's result as `kgmem query --json` prints it: its collection, snapshot,
    strategy, explanation and hits."""
    return {"collection": collection, **result.as_dict()}


def snapshot_records(snapshots: list[Snapshot]) -> list[dict[str, Any]]:
    """Each snapshot's fields, newest first as given."""
    return [plain(s.__dict__) for s in snapshots]


def entity_facts(
    con: duckdb.DuckDBPyConnection,
    collection: str,
    entity: str,
    as_of: AsOf,
    relation: str | None = None,
    stable_only: bool = False,
) -> list[dict[str, Any]]:
    """The fact versions of the entity named `entity` (name or alias) valid and known as of
    `as_of`, as Python values (`plain` makes them JSON); a LookupError if no entity of
    `collection` has that name."""
    entity_ids = resolve_entity(con, collection, entity)
    if not entity_ids:
        raise LookupError(f"no entity named {entity!r} in collection {collection!r}")
    return facts_table_as_of(
        con, collection, as_of, entity_ids=entity_ids, relation=relation, stable_only=stable_only
    ).to_pylist()
