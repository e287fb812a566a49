"""`WarehouseStore.apply_changes`: rows removed by key and inserted across tables in one
transaction with the stage's fingerprint, refused whole when another run recorded the
stage's state in between."""

from __future__ import annotations

import pytest

from stores.warehouse import StageRecord, StaleStageState, TableChange, Warehouse


def edge(a: str, b: str, score: float) -> dict[str, object]:
    return {"collection": "c", "method": "levenshtein", "key_a": a, "key_b": b, "score": score}


def stored(warehouse: Warehouse) -> list[tuple[str, str, float]]:
    rows = warehouse.rows("SELECT key_a, key_b, score FROM entity_blocking_edges ORDER BY ALL")
    return [(r["key_a"], r["key_b"], r["score"]) for r in rows]


def test_changes_remove_by_key_insert_and_record_the_stage_in_one_transaction(tmp_path):
    warehouse = Warehouse(str(tmp_path))
    warehouse.append("entity_blocking_edges", [edge("a", "b", 0.9), edge("a", "c", 0.95)])
    warehouse.append("entity_blocking_edges", [{**edge("a", "b", 0.9), "collection": "other"}])
    gone = {"method": "levenshtein", "key_a": "a", "key_b": "b"}
    change = TableChange("entity_blocking_edges", removed=[gone], inserted=[edge("b", "c", 0.87)])
    warehouse.apply_changes("c", [change], StageRecord("entities", "f1", read=None))
    assert stored(warehouse) == [("a", "b", 0.9), ("a", "c", 0.95), ("b", "c", 0.87)]
    assert warehouse.rows("SELECT collection FROM entity_blocking_edges WHERE key_b = 'b'") == [
        {"collection": "other"}  # another collection's row with the same key stays
    ]
    assert warehouse.stage_fingerprint("c", "entities") == "f1"

    half_named = TableChange("entity_blocking_edges", removed=[{"key_a": "a"}])
    with pytest.raises(ValueError, match="named by"):
        warehouse.apply_changes(
            "c", [TableChange("entity_blocking_edges", replace=True), half_named]
        )
    assert len(stored(warehouse)) == 3


def test_a_stale_stage_record_rolls_every_change_back(tmp_path):
    warehouse = Warehouse(str(tmp_path))
    warehouse.append("entity_blocking_edges", [edge("a", "b", 0.9)])
    warehouse.record_fingerprint("c", "entities", "f2")  # another run, since we read f1
    replace = TableChange("entity_blocking_edges", inserted=[edge("x", "y", 0.99)], replace=True)
    with pytest.raises(StaleStageState):
        warehouse.apply_changes("c", [replace], StageRecord("entities", "f3", read="f1"))
    assert stored(warehouse) == [("a", "b", 0.9)]
    assert warehouse.stage_fingerprint("c", "entities") == "f2"
    unchecked = StageRecord("entities", "f3", read="f1", checked=False)
    warehouse.apply_changes("c", [replace], unchecked)
    assert stored(warehouse) == [("x", "y", 0.99)]
    assert warehouse.stage_fingerprint("c", "entities") == "f3"
