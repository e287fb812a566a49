"""The persistent blocking index of entity resolution (`transforms.entity_resolution.
BlockingIndex`) in the warehouse tables `entity_blocking_keys` and `entity_blocking_edges`:
read whole at the start of a run, written back as the rows that the run changed.

The changes are `TableChange`s for the stage to apply in the same transaction as its
entity tables, so the index always describes what those tables were resolved from.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from stores.warehouse import TableChange, WarehouseStore
from transforms.entity_resolution import BlockingIndex, EdgeKey, IndexedKey, KeyStats

KEYS_TABLE = "entity_blocking_keys"
EDGES_TABLE = "entity_blocking_edges"

INDEX_KEYS_SQL = """
SELECT norm_key, surfaces, types, tokens, band_codes FROM entity_blocking_keys
WHERE collection = ? AND config_id = ?
"""
INDEX_EDGES_SQL = """
SELECT method, key_a, key_b, score FROM entity_blocking_edges WHERE collection = ?
"""


def read_blocking_index(
    warehouse: WarehouseStore, collection: str, config_id: str
) -> BlockingIndex | None:
    """The collection's index made under `config_id`; None when there is none (a first run,
    or an index of other thresholds, seed or encoder: the caller builds it whole)."""
    with warehouse.connect() as con:
        rows = con.sql(INDEX_KEYS_SQL, params=[collection, config_id]).to_arrow_table()
        stored = con.sql(INDEX_EDGES_SQL, params=[collection]).to_arrow_table()
    if not rows.num_rows:
        return None
    keys = {
        row["norm_key"]: IndexedKey(
            KeyStats(
                row["norm_key"],
                Counter({c["name"]: c["mentions"] for c in row["surfaces"]}),
                Counter({c["name"]: c["mentions"] for c in row["types"]}),
            ),
            tuple(row["tokens"]),
            tuple(row["band_codes"]),
        )
        for row in rows.to_pylist()
    }
    edges = {
        (row["method"], row["key_a"], row["key_b"]): row["score"] for row in stored.to_pylist()
    }
    return BlockingIndex(keys, edges)


def blocking_index_changes(
    collection: str, config_id: str, previous: BlockingIndex | None, current: BlockingIndex
) -> list[TableChange]:
    """The changes that store `current` as the collection's index: the key and edge rows
    that differ from `previous`, or every row (replacing what the collection held, of any
    configuration) when there is no previous index."""
    before = previous or BlockingIndex()
    keys = [k for k, entry in current.keys.items() if before.keys.get(k) != entry]
    edges = [e for e, score in current.edges.items() if before.edges.get(e) != score]
    gone_keys = [k for k in before.keys if k not in current.keys]
    gone_edges = [e for e in before.edges if e not in current.edges]
    return [
        TableChange(
            KEYS_TABLE,
            removed=[{"norm_key": k} for k in [*keys, *gone_keys] if k in before.keys],
            inserted=[_key_row(collection, config_id, current.keys[k]) for k in keys],
            replace=previous is None,
        ),
        TableChange(
            EDGES_TABLE,
            removed=[_edge_key(e) for e in [*edges, *gone_edges] if e in before.edges],
            inserted=[
                {"collection": collection, **_edge_key(e), "score": current.edges[e]} for e in edges
            ],
            replace=previous is None,
        ),
    ]


def _key_row(collection: str, config_id: str, entry: IndexedKey) -> dict[str, Any]:
    stats = entry.stats
    return {
        "collection": collection,
        "norm_key": entry.key,
        "config_id": config_id,
        "entity_type": stats.entity_type,
        "surfaces": [{"name": s, "mentions": n} for s, n in sorted(stats.surfaces.items())],
        "types": [{"name": t, "mentions": n} for t, n in sorted(stats.types.items())],
        "tokens": list(entry.tokens),
        "band_codes": list(entry.band_codes),
    }


def _edge_key(edge: EdgeKey) -> dict[str, str]:
    method, key_a, key_b = edge
    return {"method": method, "key_a": key_a, "key_b": key_b}
