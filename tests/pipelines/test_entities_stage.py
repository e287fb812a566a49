"""The entities stage over a real warehouse and the packaged encoder: a re-run after new
documents re-blocks only their new keys against the stored blocking index and writes the
same tables as a fresh full build of all the documents; a split re-blocks nothing; new
thresholds rebuild the index."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipelines import entities
from pipelines.settings import WORKSPACE_CACHE, BuildSettings
from stores.warehouse import Warehouse
from transforms.ids import content_id

FIRST = {
    "d1": [("Priya Natarajan", "Person"), ("Acme Printing Division", "Organization"),
           ("Harborview Office", "Organization"), ("Rotterdam", "Location"),
           ("International Business Machines", "Organization")],
    "d2": [("Natarajan", "Person"), ("IBM", "Organization"), ("Rotterdam Harbour", "Location"),
           ("Acme Corp", "Organization"), ("Laura Chen", "Person")],
}  # fmt: skip
NEW = {
    "d3": [("Harbourview Office", "Organization"), ("Acme Printing Divison", "Organization"),
           ("Quentin Blake", "Person"), ("Rotterdam", "Location")],
}  # fmt: skip
"""A new document: two near-duplicates of known names, a new person, a known place."""
TABLES = ("entities", "entity_aliases", "entity_same_as", "entity_blocking_keys",
          "entity_blocking_edges")  # fmt: skip


def add_documents(warehouse: Warehouse, documents: dict[str, list[tuple[str, str]]]) -> None:
    rows = [
        {"mention_id": content_id(doc_id, i), "collection": "c", "segment_id": f"{doc_id}-0",
         "doc_id": doc_id, "text": name, "label": "X", "entity_type": kind, "char_start": 0,
         "char_end": len(name), "doc_char_start": 0, "doc_char_end": len(name), "model": "t"}
        for doc_id, names in documents.items()
        for i, (name, kind) in enumerate(names)
    ]  # fmt: skip
    warehouse.append("entity_mentions", rows)


def table_rows(warehouse: Warehouse, table: str) -> list[dict[str, Any]]:
    return warehouse.rows(f"SELECT * FROM {table} WHERE collection = 'c' ORDER BY ALL")


def test_a_rerun_reblocks_only_new_keys_and_equals_a_fresh_full_build(tmp_path: Path):
    settings = BuildSettings(embedding_cache=WORKSPACE_CACHE)  # copied into `fresh` below
    built = Warehouse(str(tmp_path / "built"))
    add_documents(built, FIRST)
    first = entities.run(built, "c", settings).details
    assert first["blocking"] == "full" and first["keys_reblocked"] == first["keys_total"] == 10

    add_documents(built, NEW)
    again = entities.run(built, "c", settings).details
    assert again["blocking"] == "incremental"
    assert (again["keys_total"], again["keys_new"], again["keys_reblocked"]) == (13, 3, 3)
    assert again["keys_changed"] == 1  # "rotterdam": one more mention, no new comparison
    tokens = {r["norm_key"]: set(r["tokens"]) for r in table_rows(built, "entity_blocking_keys")}
    new_keys = {"harbourview office", "acme printing divison", "quentin blake"}
    touched = {
        frozenset((n, k)) for n in new_keys for k in tokens if k != n and tokens[n] & tokens[k]
    }
    assert again["comparisons"]["levenshtein"] == len(touched)
    links = {r["norm_key"]: r for r in table_rows(built, "entity_same_as")}
    assert links["harbourview office"]["entity_id"] == links["harborview office"]["entity_id"]
    assert (
        links["acme printing divison"]["entity_id"] == links["acme printing division"]["entity_id"]
    )
    assert entities.run(built, "c", settings).skipped

    # A fresh build of all three documents, with the same vectors for the key names (the
    # embedding cache copied in; re-encoding a name in another batch may move its last bits)
    fresh = Warehouse(str(tmp_path / "fresh"))
    cache = built.workspace.embedding_cache_path
    fresh.workspace.embedding_cache_path.parent.mkdir(parents=True)
    shutil.copy(cache, fresh.workspace.embedding_cache_path)
    add_documents(fresh, {**FIRST, **NEW})
    assert entities.run(fresh, "c", settings).details["blocking"] == "full"
    for table in TABLES:
        assert table_rows(built, table) == table_rows(fresh, table), table


def test_a_split_reblocks_nothing_and_new_thresholds_rebuild_the_index(tmp_path: Path):
    warehouse = Warehouse(str(tmp_path))
    add_documents(warehouse, {**FIRST, **NEW})
    entities.run(warehouse, "c", BuildSettings())
    split = {"collection": "c", "kind": "cannot_link", "key_a": "harborview office",
             "key_b": "harbourview office", "created_at": datetime.now(UTC)}  # fmt: skip
    warehouse.append("entity_constraints", [split])
    details = entities.run(warehouse, "c", BuildSettings()).details
    assert (details["blocking"], details["keys_reblocked"]) == ("incremental", 0)
    assert details["comparisons"] == {"levenshtein": 0, "embedding": 0}
    assert details["index_rows_written"] == 0
    links = {r["norm_key"]: r["entity_id"] for r in table_rows(warehouse, "entity_same_as")}
    assert links["harbourview office"] != links["harborview office"]

    stricter = entities.run(warehouse, "c", BuildSettings(theta_str=0.95)).details
    assert stricter["blocking"] == "full" and stricter["keys_reblocked"] == 13
    configs = warehouse.rows("SELECT DISTINCT config_id FROM entity_blocking_keys")
    assert len(configs) == 1  # the old configuration's rows are gone
